"""gcp.InferenceTier: explicit versions on GPU VMs behind a weighted regional load balancer
with a Cloud Armor throttle, the AWS gateway on every VM, alerts and a dashboard."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies
from aistack.errors import ConfigError
from aistack.gateway.local import NGINX_MISSING, find_nginx
from aistack.gateway.serving import serving_nginx_conf
from aistack.gcp._inference_node import unpack_startup_script
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack
from tests.gcp.test_network import ACCOUNTS

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-inference_tier")

PROJECT = "team-ml-prod"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"
BACKEND = "gcp:compute/regionBackendService:RegionBackendService"
URL_MAP = "gcp:compute/regionUrlMap:RegionUrlMap"
ARMOR = "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy"
RULE = "gcp:compute/forwardingRule:ForwardingRule"
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
IMAGE = "europe-west4-docker.pkg.dev/team/serve/vllm@sha256:" + "b" * 64
NGINX = "europe-west4-docker.pkg.dev/team/serve/nginx@sha256:" + "c" * 64
BOOT_IMAGE = (
    "projects/deeplearning-platform-release/global/images/"
    "common-cu129-ubuntu-2204-nvidia-580-v20260909"
)
CERT = f"projects/{PROJECT}/regions/europe-west4/sslCertificates/serve"


def tier_args(governance, **overrides):
    return {
        "governance": governance,
        "region": "europe-west4",
        "modelName": "support-bot",
        "versions": [
            {"version": "1.4.0", "weight": 90},
            {"version": "1.3.2", "weight": 10},
        ],
        "image": IMAGE,
        "gatewayImage": NGINX,
        "machineType": "g2-standard-8",
        "sourceImage": BOOT_IMAGE,
        "maxNodes": 4,
        "requestLogging": "metadata",
        "certificate": CERT,
        "latencySloMs": 4000,
        "quality": {"threshold": 0.8},
        **overrides,
    }


def stack(governance, seen=None, network=None, models_region="europe-west4", **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        models = gcp.DatasetBucket(
            "models",
            {"kind": "models", "region": models_region, "governance": governance},
            services=apis,
        )
        net = gcp.Network(
            "net",
            {
                "governance": governance,
                "region": "europe-west4",
                "inferenceMachineTypes": ["g2-standard-8"],
                "proxyOnlySubnet": True,
                **(network or {}),
            },
            services=apis,
            service_accounts=ACCOUNTS,
        )
        tier = gcp.InferenceTier(
            "serve", tier_args(governance, **overrides), services=apis, network=net, models=models
        )
        if seen is not None:
            seen["tier"] = tier

    return program


@pytest.fixture(scope="module")
def default_build():
    """The default tier (two versions, metadata logging) and its component, built once for
    the module: most tests read only this build."""
    seen: dict = {}
    with shared(run_stack(stack(dict(GOVERNANCE), seen))) as graph:
        yield graph, seen["tier"]


@pytest.fixture
def default_graph(default_build):
    return default_build[0]


@pytest.fixture(scope="module")
def no_logging_build():
    """The default tier with request logging off, read by two tests."""
    seen: dict = {}
    with shared(run_stack(stack(dict(GOVERNANCE), seen, requestLogging="none"))) as graph:
        yield graph, seen["tier"]


@pytest.fixture(scope="module")
def full_logging_build():
    """The default tier with full request logging of confidential data kept 60 days, read
    by two tests."""
    seen: dict = {}
    extra = {"logDataClassification": "confidential", "logRetentionDays": 60}
    with shared(run_stack(stack(dict(GOVERNANCE), seen, requestLogging="full", **extra))) as graph:
        yield graph, seen["tier"]


def test_each_version_gets_template_group_autoscaler_and_backend(default_graph):
    graph = default_graph
    for kind in (TEMPLATE, GROUP, AUTOSCALER, BACKEND):
        assert len(graph.of_type(kind)) == 2, kind
    assert graph.named("serve-1-4-0-mig").inputs["name"] == "serve-1-4-0-13d1dc"
    assert not missing_api_dependencies(graph)


def startup(graph, version="1-4-0"):
    return graph.named(f"serve-{version}-template").inputs["metadata"]["startup-script"]


def test_vms_are_on_demand_shielded_private_with_os_login_in_the_inference_tier(default_graph):
    graph = default_graph
    template = graph.named("serve-1-4-0-template").inputs
    assert template["scheduling"]["provisioningModel"] == "STANDARD"
    assert template["scheduling"]["onHostMaintenance"] == "TERMINATE"
    assert all(v for v in template["shieldedInstanceConfig"].values())
    (nic,) = template["networkInterfaces"]
    assert "accessConfigs" not in nic and "inference" in nic["subnetwork"]
    assert template["metadata"]["enable-oslogin"] == "TRUE"
    assert template["metadata"]["block-project-ssh-keys"] == "TRUE"
    assert template["serviceAccount"]["email"] == ACCOUNTS["inference"]


def test_the_inference_account_reads_only_the_model_prefix_of_the_models_bucket(default_graph):
    graph = default_graph
    grants = [r.inputs for r in graph.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")]
    served = [g for g in grants if g["member"] == f"serviceAccount:{ACCOUNTS['inference']}"]
    assert served and all("support-bot" in g["condition"]["expression"] for g in served)
    assert all(g["role"] == "roles/storage.objectViewer" for g in served)


def test_autoscaler_max_is_the_cost_cap_and_scale_in_waits_out_a_model_load(run, governance):
    graph = run(stack(governance, versions=[
        {"version": "1.4.0", "weight": 100, "maxNodes": 6},
        {"version": "1.3.2", "weight": 0},
        {"version": "1.2.0", "weight": 0, "standby": "zero"},
    ]))  # fmt: skip
    policy = graph.named("serve-1-4-0-autoscaler").inputs["autoscalingPolicy"]
    assert (policy["minReplicas"], policy["maxReplicas"]) == (1, 6)
    assert policy["scaleInControl"] == {
        "maxScaledInReplicas": {"fixed": 1}, "timeWindowSec": 600
    }  # fmt: skip
    assert graph.named("serve-1-3-2-autoscaler").inputs["autoscalingPolicy"]["minReplicas"] == 1
    assert graph.named("serve-1-2-0-autoscaler").inputs["autoscalingPolicy"]["minReplicas"] == 0


def test_url_map_weights_the_versions_backend_services(default_graph):
    graph = default_graph
    action = graph.named("serve-urlmap").inputs["defaultRouteAction"]
    weights = sorted(w["weight"] for w in action["weightedBackendServices"])
    assert weights == [10, 90]
    backend = graph.named("serve-1-4-0-backend").inputs
    assert backend["loadBalancingScheme"] == "INTERNAL_MANAGED"
    assert backend["securityPolicy"].endswith("/securityPolicies/serve-armor") or backend[
        "securityPolicy"
    ].startswith("https://")


def test_internal_by_default_external_managed_when_public(run, governance, default_graph):
    internal = default_graph.named("serve-rule").inputs
    assert internal["loadBalancingScheme"] == "INTERNAL_MANAGED"
    assert internal["portRange"] == "443" and "subnetwork" in internal
    public = run(stack(governance, public=True)).named("serve-rule").inputs
    assert public["loadBalancingScheme"] == "EXTERNAL_MANAGED" and "subnetwork" not in public


def test_cloud_armor_throttles_per_client_ip_or_api_key_with_429(run, governance, default_graph):
    graph = default_graph
    rules = graph.named("serve-armor").inputs["rules"]
    throttle = next(r for r in rules if r["action"] == "throttle")
    options = throttle["rateLimitOptions"]
    assert options["exceedAction"] == "deny(429)" and options["enforceOnKey"] == "IP"
    assert options["rateLimitThreshold"] == {"count": 600, "intervalSec": 60}
    assert any(r["priority"] == 2147483647 for r in rules)
    keyed = run(stack(governance, throttleKey="HTTP_HEADER")).named("serve-armor").inputs
    options = next(r for r in keyed["rules"] if r["action"] == "throttle")["rateLimitOptions"]
    assert (options["enforceOnKey"], options["enforceOnKeyName"]) == ("HTTP_HEADER", "x-api-key")


def test_the_vm_gateway_is_the_shared_serving_nginx_conf(default_build):
    graph, tier = default_build
    files = unpack_startup_script(startup(graph))
    expected = serving_nginx_conf(
        tier.gateway, request_logging="metadata", trusted_proxies=("10.40.192.0/23",)
    )
    strip = [ln for ln in expected.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert files["nginx.conf"] == "\n".join(strip) + "\n"
    assert "set_real_ip_from 10.40.192.0/23;" in files["nginx.conf"]
    assert "AISTACK_CLOUD=gcp" in startup(graph)
    assert "if [[ $AISTACK_CLOUD == gcp ]]" in files["serve.sh"]
    assert "--log-driver=gcplogs" in files["runtime.args"]


@pytest.mark.parametrize("logging", ["none", "metadata", "full"])
def test_the_vm_nginx_conf_passes_real_nginx(logging, request):
    nginx = find_nginx()
    if nginx is None:
        pytest.fail(NGINX_MISSING)
    # The module's builds with metadata (the default), no and full request logging. The
    # log retention (60 days in full_logging_build) sizes only the log bucket: the startup
    # script and the gateway's directories are those of any retention.
    build = {"metadata": "default_build", "none": "no_logging_build",
             "full": "full_logging_build"}[logging]  # fmt: skip
    graph, tier = request.getfixturevalue(build)
    conf = unpack_startup_script(startup(graph))["nginx.conf"]
    gateway = tier.gateway
    # A short root: the limiter's unix socket path must fit sun_path (108 bytes).
    with tempfile.TemporaryDirectory(dir="/tmp") as root:
        for key in ("run_dir", "temp_dir", "log_dir", "cache_dir"):
            directory = getattr(gateway, key)
            moved = f"{root}/{key}"
            Path(moved).mkdir()
            conf = conf.replace(directory, moved)
        path = Path(root) / "nginx.conf"
        path.write_text(conf)
        result = subprocess.run(
            [nginx, "-t", "-p", root, "-c", str(path)], capture_output=True, text=True
        )
    assert result.returncode == 0, result.stderr


def test_aws_serving_user_data_has_no_gcp_blocks():
    from aistack.aws.inference import node as aws_serving

    assert "[gcp]" not in aws_serving.serving_script("serve.sh")
    assert "AISTACK_CLOUD ==" not in aws_serving.serving_script("serve.sh")
    assert "# [gcp]" in aws_serving.serving_script("serve.sh", cloud="gcp")


def test_health_check_is_the_gateway_health_path_and_autoheals_after_a_model_load(default_graph):
    graph = default_graph
    check = graph.named("serve-health").inputs["httpHealthCheck"]
    assert check == {"port": 8080, "requestPath": "/healthz"} or check["requestPath"]
    group = graph.named("serve-1-4-0-mig").inputs
    assert group["autoHealingPolicies"]["initialDelaySec"] == 45 * 60
    assert group["namedPorts"] == [{"name": "http", "port": check["port"]}]


def test_alerts_on_p99_latency_5xx_ratio_and_model_quality_and_a_dashboard(default_graph):
    graph = default_graph
    kinds = {a.inputs["userLabels"]["aistack-alert-kind"] for a in graph.of_type(ALERT)}
    assert kinds == {"latency-p99", "error-rate", "model-quality"}
    latency = graph.named("serve-latency-p99").inputs["conditions"][0]["conditionThreshold"]
    assert latency["aggregations"][0]["perSeriesAligner"] == "ALIGN_PERCENTILE_99"
    assert "https/internal/backend_latencies" in latency["filter"]
    errors = graph.named("serve-error-rate").inputs["conditions"][0]["conditionThreshold"]
    assert "denominatorFilter" in errors and errors["thresholdValue"] == 0.01
    body = json.loads(graph.named("serve-dashboard").inputs["dashboardJson"])
    titles = [t["widget"]["title"] for t in body["mosaicLayout"]["tiles"]]
    assert any("p50 / p90 / p99" in t for t in titles)
    assert any("Cost per 1,000 requests" in t for t in titles)


def test_request_logging_sets_the_load_balancer_log_and_a_regional_log_bucket(
    full_logging_build, request
):
    graph, _ = full_logging_build
    assert graph.named("serve-1-4-0-backend").inputs["logConfig"]["enable"] is True
    bucket = graph.named("serve-logs").inputs
    assert (bucket["location"], bucket["retentionDays"]) == ("europe-west4", 60)
    labels = graph.named("serve-1-4-0-template").inputs["labels"]
    assert labels["aistack-request-logging"] == "full"
    assert labels["aistack-log-data-classification"] == "confidential"
    off, _ = request.getfixturevalue("no_logging_build")
    assert off.named("serve-1-4-0-backend").inputs["logConfig"]["enable"] is False


def test_bad_input_is_one_config_error_naming_every_field(run, governance):
    prod = {**governance, "environment": "prod"}
    with pytest.raises(ConfigError) as caught:
        run(stack(
            prod,
            network={"proxyOnlySubnet": False},
            models_region="us-central1",
            versions=[{"version": "1.4.0", "weight": 50}, {"version": "1.3.2", "weight": 10}],
            requestLogging="full",
            certificate=None,
            gatewayImage=None,
            fallback="previous_version",
        ))  # fmt: skip
    fields = {p.field for p in caught.value.problems}
    assert {
        "serve.network", "serve.models", "serve.versions", "serve.versions[0].approvedBy",
        "serve.versions[1].approvedBy", "serve.logDataClassification", "serve.logRetentionDays",
        "serve.certificate", "serve.gatewayImage", "serve.fallback",
    } <= fields  # fmt: skip


def test_latest_is_refused_as_a_version(run, governance):
    with pytest.raises(ConfigError, match="S7"):
        run(stack(governance, versions=[{"version": "latest", "weight": 100}]))


def test_plaintext_needs_an_explicit_opt_out_for_confidential_data(run, governance):
    with pytest.raises(ConfigError, match="certificate"):
        run(stack(governance, certificate=None))
    graph = run(stack(governance, certificate=None, allowPlaintextHttp=True))
    assert graph.named("serve-rule").inputs["portRange"] == "80"


def test_simulated_gcp_refuses_what_the_apis_refuse():
    from aistack.engine.gcp_cloud.load_balancing import load_balancing_resource

    bad_map = {"defaultRouteAction": {"weightedBackendServices": [{"weight": 1001}]}}
    with pytest.raises(SimulatedGcpError, match="0 to 1000"):
        load_balancing_resource(URL_MAP, PROJECT, "europe-west4", "m", bad_map, {})
    global_policy = {"loadBalancingScheme": "INTERNAL_MANAGED",
                     "securityPolicy": f"projects/{PROJECT}/global/securityPolicies/p"}  # fmt: skip
    with pytest.raises(SimulatedGcpError, match="regional security policy"):
        load_balancing_resource(BACKEND, PROJECT, "europe-west4", "b", global_policy, {})
    throttle = {
        "rules": [
            {
                "priority": 1,
                "action": "throttle",
                "rateLimitOptions": {
                    "exceedAction": "deny(418)",
                    "rateLimitThreshold": {"count": 1, "intervalSec": 60},
                },
            }
        ]
    }
    with pytest.raises(SimulatedGcpError, match="exceedAction"):
        load_balancing_resource(ARMOR, PROJECT, "europe-west4", "p", throttle, {})
    with pytest.raises(SimulatedGcpError, match="maxNumReplicas"):
        load_balancing_resource(
            AUTOSCALER,
            PROJECT,
            "europe-west4",
            "a",
            {"autoscalingPolicy": {"minReplicas": 3, "maxReplicas": 2}},
            {},
        )
    rule_id, out = load_balancing_resource(
        RULE, PROJECT, "europe-west4", "r", {"loadBalancingScheme": "INTERNAL_MANAGED"}, {}
    )
    assert rule_id == f"projects/{PROJECT}/regions/europe-west4/forwardingRules/r"
    assert out["ipAddress"].startswith("10.")


def test_quota_needs_count_every_version_at_its_maximum_on_demand(default_build):
    needs = default_build[1].quota_needs()
    assert {n.market for n in needs} == {"on-demand"} and len(needs) == 2
    assert all(n.max_nodes == 4 for n in needs)


def test_cost_counts_each_version_once_on_its_autoscaler_within_its_bounds(default_graph):
    from aistack import catalog, cost

    graph = default_graph
    report = cost.estimate(graph)
    items = {item.resource: item for item in report.items if item.monthly_usd}
    assert {"serve-1-4-0-autoscaler", "serve-1-3-2-autoscaler"} <= set(items)
    assert not any(name.endswith("-mig") for name in items)
    hourly = catalog.get("g2-standard-8", cloud="gcp").price("europe-west4")
    for name in ("serve-1-4-0-autoscaler", "serve-1-3-2-autoscaler"):
        item = items[name]
        assert hourly * 730 <= item.monthly_usd <= 4 * hourly * 730  # within 1-4 VMs
        assert item.monthly_usd <= item.naive_monthly_usd


# ---- serve.sh on a GCE VM, with stubs for gcloud, the metadata server and docker --------

GCE_STUBS = {
    "curl": r"""
url=${*: -1}
case $url in
  */computeMetadata/v1/instance/name) printf 'serve-1-4-0-x1z2\n200' ;;
  */computeMetadata/v1/instance/zone) printf 'projects/1/zones/europe-west4-a\n200' ;;
  http://127.0.0.1:8000/*) [[ ! -e $STUB_DIR/model-down ]] || exit 22 ;;
  http://127.0.0.1:*) ;;
  *) printf 'Not Found\n404' ;;
esac
""",
    "gcloud": r"""
case "$1 $2" in
  "storage rsync") [[ ! -e $STUB_DIR/gcs-down ]] || exit 1; mkdir -p "${*: -1}"
                   echo w >"${*: -1}/model.bin" ;;
  "auth print-access-token") echo token ;;
esac
""",
    "docker": '[[ $1 != login ]] || cat >/dev/null',
    "systemctl": "", "mount": "", "nginx": "", "lsblk": "", "mountpoint": "exit 1",
}  # fmt: skip
GCE_SAFE_TOOLS = ("bash", "cat", "mkdir", "rm", "mv", "ln", "grep", "sed", "dirname", "sleep",
                  "env", "tr", "head", "date", "find", "cp")  # fmt: skip


@pytest.fixture
def vm(tmp_path, default_graph):
    """A sandbox with the files of a rendered serving VM and stubs first (and only) on PATH."""
    import shutil

    bin_dir, stub_dir, home = tmp_path / "bin", tmp_path / "stub", tmp_path / "opt"
    for directory in (bin_dir, stub_dir, home):
        directory.mkdir()
    for tool in GCE_SAFE_TOOLS:
        (bin_dir / tool).symlink_to(shutil.which(tool))
    for name, body in GCE_STUBS.items():
        stub = bin_dir / name
        stub.write_text(
            f'#!{shutil.which("bash")}\nprintf "%s\\n" "{name} $*" >>"$STUB_DIR/calls"\n{body}\n'
        )
        stub.chmod(0o755)
    text = startup(default_graph)
    for name, content in unpack_startup_script(text).items():
        (home / name).write_text(content)
    env = dict(
        line.split("=", 1)
        for line in text.split("<<'AISTACK_ENV'\n", 1)[1].split("AISTACK_ENV\n", 1)[0].splitlines()
    )
    env.update(
        AISTACK_CACHE_DIR=str(tmp_path / "ssd"),
        AISTACK_STATE_DIR=str(tmp_path / "state"),
        AISTACK_LOG_DIR=str(tmp_path / "log"),
        AISTACK_SYSTEMD_DIR=str(tmp_path / "systemd"),
        AISTACK_GATEWAY_DIRS=str(tmp_path / "gw"),
        AISTACK_GATEWAY_CACHE_DIR=str(tmp_path / "gw-cache"),
        AISTACK_GATEWAY_CONF=str(home / "nginx.conf"),
        AISTACK_OPS_AGENT_CONFIG=str(tmp_path / "ops-agent" / "config.yaml"),
        AISTACK_DISK_BY_ID=str(tmp_path / "by-id"),
        AISTACK_MODEL_LOAD_TIMEOUT_SECONDS="60",
        AISTACK_SYNC_RETRY_SECONDS="0",
    )
    env_file = tmp_path / "serving.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))

    def boot(*command):
        result = subprocess.run(
            [shutil.which("bash"), str(home / "serve.sh"), *(command or ("boot",))],
            env={"PATH": str(bin_dir), "STUB_DIR": str(stub_dir), "HOME": str(tmp_path),
                 "AISTACK_ENV_FILE": str(env_file)},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        calls_file = stub_dir / "calls"
        calls = calls_file.read_text().splitlines() if calls_file.exists() else []
        return result, calls

    vm_ = type("Vm", (), {})()
    vm_.boot, vm_.stubs, vm_.root = boot, stub_dir, tmp_path
    return vm_


def test_boot_on_gce_copies_the_model_with_gcloud_then_serves_without_a_lifecycle_hook(vm):
    result, calls = vm.boot()
    assert result.returncode == 0, result.stderr

    def first(prefix):
        return next(i for i, call in enumerate(calls) if call.startswith(prefix))

    assert (
        first("gcloud storage rsync")
        < first("docker login --username oauth2accesstoken")
        < first(f"docker pull --quiet {IMAGE}")
        < first("systemctl enable --now aistack-model.service")
        < first("systemctl enable --now aistack-gateway.service")
        < first("systemctl enable --now aistack-watch.service")
    )
    (sync,) = [c for c in calls if c.startswith("gcloud storage rsync")]
    assert "gs://" in sync and "/support-bot/1.4.0" in sync
    assert not any(c.startswith("aws ") for c in calls)
    assert (vm.root / "ops-agent" / "config.yaml").exists()


def test_on_gce_a_dead_model_server_stops_the_gateway_so_autohealing_recreates_the_vm(vm):
    result, _ = vm.boot()
    assert result.returncode == 0, result.stderr
    (vm.stubs / "model-down").touch()
    (vm.stubs / "calls").write_text("")
    env_file = vm.root / "serving.env"
    env_file.write_text(
        env_file.read_text() + "AISTACK_WATCH_FAILURES=1\nAISTACK_WATCH_INTERVAL_SECONDS=1\n"
    )
    # One check of the watch, as its loop runs it.
    script = vm.root / "opt" / "serve.sh"
    text = script.read_text().replace('main "$@"', "prepare_dirs; check_model")
    script.with_name("check.sh").write_text(text)
    import shutil

    result = subprocess.run(
        [shutil.which("bash"), str(script.with_name("check.sh"))],
        env={"PATH": str(vm.root / "bin"), "STUB_DIR": str(vm.stubs), "HOME": str(vm.root),
             "AISTACK_ENV_FILE": str(env_file)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    calls = (vm.stubs / "calls").read_text().splitlines()
    assert "systemctl stop aistack-gateway.service" in calls
