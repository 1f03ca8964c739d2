"""k8s.InferenceService: versions weighted by an HTTPRoute, each a Deployment of the runtime
with the aistack gateway sidecar; autoscaling with an explicit cap; ingress only from the
Gateway's proxies; serving alerts. Validated by the real tools (kubernetes-validate strict
for 1.30 and 1.37, the kept Gateway API, KEDA and Prometheus CRDs, promql-parser, real
nginx running the sidecar's config) and one ConfigError for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import time

import kubernetes_validate
import promql_parser
import pytest

from aistack import engine, k8s
from aistack.errors import ConfigError
from aistack.gateway.local import (
    NGINX_MISSING,
    FakeModelServer,
    find_nginx,
    free_port,
    http_request,
)
from aistack.k8s._base import NEWEST_KUBERNETES, OLDEST_KUBERNETES
from aistack.k8s.inference_service import rollback_command
from aistack.queries.k8s import builtin_manifests, custom_manifests, manifest
from aistack.scan.crd_schemas import validate_custom_resource
from tests._harness.shared_graphs import shared
from tests.k8s.conftest import GOVERNANCE

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("k8s-inference_service")

DIGEST = "sha256:" + "cd" * 32
IMAGE = f"europe-west4-docker.pkg.dev/team-ml/serve/vllm-openai@{DIGEST}"
NGINX_IMAGE = f"europe-west4-docker.pkg.dev/team-ml/mirror/nginx-unprivileged@{DIGEST}"
SYNC_IMAGE = f"gcr.io/google.com/cloudsdktool/google-cloud-cli@{DIGEST}"


#: Google APIs through Private Google Access: where the weights' sync reads gs://.
GOOGLE_APIS = {"cidr": "199.36.153.8/30", "purpose": "Google APIs: the model weights"}


def _team(gpus=8, tier="serve", accounts=("server",), identity=True, egress=True):
    def account(name):
        if not identity:
            return {"name": name}
        email = f"{name}@team-ml.iam.gserviceaccount.com"
        return {"name": name, "identity": "gke-workload-identity", "gcpServiceAccount": email}

    return k8s.TeamNamespace(
        f"ml-{tier}",
        {
            "team": "ml",
            "tier": tier,
            "gpus": gpus,
            "governance": GOVERNANCE,
            "serviceAccounts": [account(name) for name in accounts],
            "allowEgress": [GOOGLE_APIS] if egress else [],
        },
    )


def _args(**overrides):
    return {
        "governance": GOVERNANCE,
        "modelName": "chat",
        "versions": [{"version": "1.3.0", "weight": 0}, {"version": "1.4.0", "weight": 100}],
        "image": IMAGE,
        "gatewayImage": NGINX_IMAGE,
        "maxReplicas": 4,
        "requestLogging": "metadata",
        "model": {"uri": "gs://team-ml-models/serving", "syncImage": SYNC_IMAGE},
        "autoscaling": {"prometheusUrl": "http://prometheus-operated.monitoring.svc:9090"},
        "parentGateway": {"name": "internal", "namespace": "gateway", "sectionName": "https"},
        "hostnames": ["chat.ml.example.com"],
        "ingressFrom": [{"namespace": "gateway", "purpose": "the Gateway's proxies"}],
        "latencySloMs": 4000,
        "replicaHourlyCostUsd": 1.2,
        "quality": {"threshold": 0.8},
        **overrides,
    }


def _graph(gpus=8, **overrides):
    def program():
        k8s.InferenceService("chat", _args(**overrides), team=_team(gpus))

    return engine.run(program)


def _objects(graph, kind):
    return [
        manifest(r)
        for r in graph.resources
        if r.type.startswith("kubernetes:") and r.type.endswith(f":{kind}")
    ]


def _by_name(graph, kind):
    return {m["metadata"]["name"]: m for m in _objects(graph, kind)}


@pytest.fixture(scope="module")
def graph():
    with shared(_graph()) as built:
        yield built


# ---- the real validators -------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"autoscaling": {"kind": "hpa", "hpaMetric": "vllm:num_requests_waiting"}},
        {"monitoring": "gke-managed-prometheus", "runtime": "triton", "model": None},
    ],
    ids=["keda-prometheus-operator", "hpa", "triton-gke-managed"],
)
def test_every_object_is_valid_for_kubernetes_and_its_crd(overrides, request):
    # The defaults are the module's graph: built once, not again for this case.
    graph = _graph(**overrides) if overrides else request.getfixturevalue("graph")
    builtins = builtin_manifests(graph)
    kinds = {m["kind"] for _, m in builtins}
    assert {"Deployment", "Service", "ConfigMap", "PodDisruptionBudget", "NetworkPolicy"} <= kinds
    for _, document in builtins:
        for version in (OLDEST_KUBERNETES, NEWEST_KUBERNETES):
            kubernetes_validate.validate(document, version, strict=True)
    customs = custom_manifests(graph)
    assert {m["kind"] for _, m in customs} >= {"HTTPRoute"}
    for _, document in customs:
        assert validate_custom_resource(document) == [], document["kind"]


def test_a_misspelt_route_field_is_caught_by_the_gateway_api_crd(graph):
    (route,) = _objects(graph, "HTTPRoute")
    route["spec"]["rules"][0]["backendRefs"][0]["weigth"] = 5
    assert any("weigth" in error for error in validate_custom_resource(route))


def test_every_rule_and_the_autoscaler_query_are_valid_promql(graph):
    (rules,) = _objects(graph, "PrometheusRule")
    exprs = [rule["expr"] for group in rules["spec"]["groups"] for rule in group["rules"]]
    exprs += [
        scaler["spec"]["triggers"][0]["metadata"]["query"]
        for scaler in _objects(graph, "ScaledObject")
    ]
    assert len(exprs) > 10
    for expr in exprs:
        promql_parser.parse(expr)  # raises ValueError on a syntax error


# ---- traffic: explicit versions weighted by the route (S6, S7) --------------------------------


def test_the_route_weights_each_versions_service_by_its_share(graph):
    (route,) = _objects(graph, "HTTPRoute")
    backends = route["spec"]["rules"][0]["backendRefs"]
    assert [(b["name"], b["port"], b["weight"]) for b in backends] == [
        ("chat-1-3-0", 80, 0),
        ("chat-1-4-0", 80, 100),
    ]
    services = _by_name(graph, "Service")
    for backend in backends:
        service = services[backend["name"]]
        assert service["spec"]["ports"][0]["port"] == backend["port"]
        deployment = _by_name(graph, "Deployment")[backend["name"]]
        assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert route["spec"]["parentRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "internal",
            "namespace": "gateway",
            "sectionName": "https",
        }
    ]
    # The request timeout outlasts the gateway's own wait for the model (300 s by default).
    assert int(route["spec"]["rules"][0]["timeouts"]["request"].rstrip("s")) > 300


def test_serving_pods_carry_the_explicit_model_version(graph):
    for name, deployment in _by_name(graph, "Deployment").items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert labels["aistack.dev/model-name"] == "chat"
        assert name == "chat-" + labels["aistack.dev/model-version"].replace(".", "-")


def test_rollback_is_one_patch_of_the_route_weights(graph):
    (route,) = _objects(graph, "HTTPRoute")
    args = k8s.InferenceServiceArgs.parse(_args())
    command = rollback_command(args, "ml-serve", "1.3.0")
    assert command.startswith("kubectl --namespace ml-serve patch httproute chat --type=json")
    patch = json.loads(command.split("--patch ", 1)[1].strip("'"))
    for op in patch:
        _, _, _, rule, _, index, field = op["path"].split("/")
        route["spec"]["rules"][int(rule)]["backendRefs"][int(index)][field] = op["value"]
    weights = {b["name"]: b["weight"] for b in route["spec"]["rules"][0]["backendRefs"]}
    assert weights == {"chat-1-3-0": 100, "chat-1-4-0": 0}
    with pytest.raises(ValueError, match="latest"):
        rollback_command(args, "ml-serve", "latest")


# ---- capacity: autoscaling with a cap (S3) ------------------------------------------------------


def test_each_version_scales_on_its_queue_between_explicit_bounds(graph):
    scalers = _by_name(graph, "ScaledObject")
    live, standby = scalers["chat-1-4-0"]["spec"], scalers["chat-1-3-0"]["spec"]
    assert (live["minReplicaCount"], live["maxReplicaCount"]) == (1, 4)
    # A warm standby keeps one replica loaded, so a rollback takes seconds.
    assert (standby["minReplicaCount"], standby["maxReplicaCount"]) == (1, 4)
    trigger = live["triggers"][0]
    assert trigger["type"] == "prometheus"
    assert 'aistack_dev_model_version="1.4.0"' in trigger["metadata"]["query"]
    assert "vllm:num_requests_waiting" in trigger["metadata"]["query"]
    behaviour = live["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behaviour["scaleDown"]["stabilizationWindowSeconds"] == 600
    # The autoscaler owns the replicas: a Deployment with spec.replicas would fight it.
    assert all("replicas" not in d["spec"] for d in _objects(graph, "Deployment"))


def test_keda_waits_out_its_cooldown_only_where_it_may_scale_to_zero():
    """KEDA's cooldownPeriod applies to scaling to 0 only (ScaledObject spec): rendered on
    a standby at zero, not on a floor of one, where it would be a knob that does nothing."""
    graph = _graph(
        versions=[
            {"version": "1.3.0", "weight": 0, "standby": "zero"},
            {"version": "1.4.0", "weight": 100},
        ]
    )
    scalers = _by_name(graph, "ScaledObject")
    assert scalers["chat-1-3-0"]["spec"]["minReplicaCount"] == 0
    assert scalers["chat-1-3-0"]["spec"]["cooldownPeriod"] == 600
    assert "cooldownPeriod" not in scalers["chat-1-4-0"]["spec"]


@pytest.mark.parametrize(
    ("uri", "sync_image", "gcloud_config"),
    [
        ("gs://team-ml-models/serving", SYNC_IMAGE, True),
        ("s3://team-ml-models/serving", f"public.ecr.aws/aws-cli/aws-cli@{DIGEST}", False),
    ],
    ids=["gcloud", "aws-cli"],
)
def test_the_weights_sync_gets_gclouds_config_only_when_gcloud_runs_it(
    uri, sync_image, gcloud_config
):
    graph = _graph(model={"uri": uri, "syncImage": sync_image})
    pod = _by_name(graph, "Deployment")["chat-1-4-0"]["spec"]["template"]["spec"]
    [sync] = pod["initContainers"]
    names = {variable["name"] for variable in sync["env"]}
    assert ("CLOUDSDK_CONFIG" in names) is gcloud_config
    assert "HOME" in names  # the root is read-only: the CLIs write their config here


def test_an_hpa_standby_at_zero_is_a_deployment_of_zero_without_an_hpa():
    graph = _graph(
        autoscaling={"kind": "hpa", "hpaMetric": "vllm:num_requests_waiting"},
        versions=[
            {"version": "1.3.0", "weight": 0, "standby": "zero"},
            {"version": "1.4.0", "weight": 100, "minReplicas": 2},
        ],
    )
    hpas = _by_name(graph, "HorizontalPodAutoscaler")
    assert set(hpas) == {"chat-1-4-0"}
    assert (
        hpas["chat-1-4-0"]["spec"]["minReplicas"],
        hpas["chat-1-4-0"]["spec"]["maxReplicas"],
    ) == (2, 4)
    deployments = _by_name(graph, "Deployment")
    assert deployments["chat-1-3-0"]["spec"]["replicas"] == 0
    assert "replicas" not in deployments["chat-1-4-0"]["spec"]


def test_pulumi_waits_as_long_as_a_model_may_take_to_load(graph):
    deployment = _by_name(graph, "Deployment")["chat-1-4-0"]
    assert deployment["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == str(40 * 60)
    runtime = deployment["spec"]["template"]["spec"]["containers"][0]
    startup = runtime["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] == 30 * 60
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}


# ---- the pod: runtime, model copy, gateway sidecar ---------------------------------------------


def test_the_pod_copies_the_version_then_serves_it_read_only_behind_the_gateway(graph):
    pod = _by_name(graph, "Deployment")["chat-1-4-0"]["spec"]["template"]["spec"]
    (sync,) = pod["initContainers"]
    assert sync["command"] == [
        "gcloud", "storage", "rsync", "--recursive",
        "gs://team-ml-models/serving/chat/1.4.0", "/models/chat",
    ]  # fmt: skip
    runtime, gateway = pod["containers"]
    assert runtime["image"] == IMAGE and gateway["image"] == NGINX_IMAGE
    assert runtime["args"][:2] == ["--model", "/models/chat"]
    assert {"name": "model", "mountPath": "/models/chat", "readOnly": True} in runtime[
        "volumeMounts"
    ]
    assert runtime["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == "server"
    for container in [sync, runtime, gateway]:
        context = container["securityContext"]
        assert context["readOnlyRootFilesystem"] and context["runAsNonRoot"]
        assert context["capabilities"] == {"drop": ["ALL"]}
    cache = next(v for v in pod["volumes"] if v["name"] == "gateway-cache")
    assert cache["emptyDir"]["medium"] == "Memory"  # prompts and keys never on disk


def test_each_version_falls_back_to_the_one_before_it():
    graph = _graph(fallback="previous_version")
    maps = _by_name(graph, "ConfigMap")
    newer = maps["chat-1-4-0-gateway"]["data"]["nginx.conf"]
    older = maps["chat-1-3-0-gateway"]["data"]["nginx.conf"]
    assert "server chat-1-3-0:80" in newer
    assert "chat-1-" not in older.replace("chat-1-3-0", "")
    # The newer version's pods start after the Service nginx resolves at start-up.
    deployment = next(
        r for r in graph.resources if r.name == "chat-1-4-0" and r.type.endswith(":Deployment")
    )
    service = next(
        r for r in graph.resources if r.name == "chat-1-3-0" and r.type.endswith(":Service")
    )
    assert service.urn in deployment.dependencies


def _run_sidecar(tmp_path, conf: str, upstream: str, previous: str | None):
    """The ConfigMap's nginx.conf, run by real nginx with the pod's paths under tmp_path."""
    nginx = find_nginx()
    if nginx is None:
        pytest.fail(NGINX_MISSING)
    for directory in (
        "/run/aistack-gateway",
        "/var/lib/aistack-gateway",
        "/var/cache/aistack-gateway",
    ):
        local = tmp_path / directory.strip("/").replace("/", "-")
        local.mkdir(parents=True, exist_ok=True)
        conf = conf.replace(directory, str(local))
    port = free_port()
    conf = conf.replace("listen 0.0.0.0:8080", f"listen 127.0.0.1:{port}")
    conf = conf.replace("127.0.0.1:8000", upstream)
    if previous:
        conf = conf.replace("chat-1-3-0:80", previous)
    if os.geteuid() == 0:
        import getpass

        conf = conf.replace("worker_processes", f"user {getpass.getuser()};\nworker_processes", 1)
    path = tmp_path / "nginx.conf"
    path.write_text(conf)
    process = subprocess.Popen(
        [nginx, "-p", str(tmp_path), "-c", str(path), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            if http_request(port, "GET", "/healthz", timeout=1)[0] == 200:
                return process, port
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                f"nginx did not start: {process.stderr.read().decode() if process.stderr else ''}"
            )
        time.sleep(0.05)


def test_the_sidecar_config_runs_in_real_nginx_with_limits_cache_and_fallback(tmp_path):
    graph = _graph(
        fallback="previous_version",
        gateway={"rateLimitPerSecond": 1, "rateLimitBurst": 1},
    )
    conf = _by_name(graph, "ConfigMap")["chat-1-4-0-gateway"]["data"]["nginx.conf"]
    assert conf.count("listen 0.0.0.0:8080") == 1
    with FakeModelServer("previous") as previous:
        down = f"127.0.0.1:{free_port()}"  # the new version's model server, not started
        process, port = _run_sidecar(tmp_path, conf, down, previous.address)
        try:
            body = {"model": "chat", "prompt": "hello"}
            status, headers, _ = http_request(port, "POST", "/v1/completions", body)
            assert status == 200
            assert headers.get("x-aistack-fallback") == "previous_version"
            statuses = [
                http_request(port, "POST", "/v1/completions", {**body, "n": i})[0] for i in range(4)
            ]
            assert 429 in statuses  # one request per second per client, burst 1
        finally:
            process.terminate()
            process.wait(timeout=10)


# ---- S1: who reaches the pods ------------------------------------------------------------------


def test_only_the_gateways_proxies_reach_the_gateway_port_and_scrapers_the_metrics(graph):
    policy = _by_name(graph, "NetworkPolicy")["chat-ingress"]
    gateway_rule, metrics_rule = policy["spec"]["ingress"]
    assert gateway_rule["ports"] == [{"protocol": "TCP", "port": 8080}]
    assert gateway_rule["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gateway"}}}
    ]
    assert metrics_rule["ports"] == [{"protocol": "TCP", "port": 8000}]
    assert metrics_rule["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "monitoring"
    }


# ---- S5, G2-G4: monitoring and what is recorded ----------------------------------------------


def test_latency_errors_cost_and_quality_are_recorded_and_alerted(graph):
    (rules,) = _objects(graph, "PrometheusRule")
    all_rules = [rule for group in rules["spec"]["groups"] for rule in group["rules"]]
    records = {(r["record"], r["labels"]["model_version"]) for r in all_rules if "record" in r}
    for version in ("1.3.0", "1.4.0"):
        for record in (
            "aistack:serving_latency_seconds:p50",
            "aistack:serving_latency_seconds:p90",
            "aistack:serving_latency_seconds:p99",
            "aistack:serving_errors:rate5m",
            "aistack:serving_cost_per_1k_requests:usd",
        ):
            assert (record, version) in records
    alerts = {r["alert"]: r for r in all_rules if "alert" in r}
    assert "> 4" in alerts["AistackServingLatencyHigh"]["expr"]
    assert "> 0.01" in alerts["AistackServingErrorsHigh"]["expr"]
    quality = alerts["AistackModelQualityLow"]["expr"]
    assert "< 0.8" in quality and "absent(" in quality  # silence alerts too (G4)
    (monitor,) = _objects(graph, "PodMonitor")
    assert monitor["spec"]["podTargetLabels"] == [
        "aistack.dev/model-name",
        "aistack.dev/model-version",
    ]


def test_logging_choice_and_approvers_are_recorded_on_the_objects():
    graph = _graph(
        requestLogging="full",
        logDataClassification="confidential",
        logRetentionDays=30,
        versions=[{"version": "2.0.0", "weight": 100, "approvedBy": "CHG-1234"}],
    )
    deployment = _by_name(graph, "Deployment")["chat-2-0-0"]
    annotations = deployment["metadata"]["annotations"]
    assert annotations["aistack.dev/request-logging"] == "full"
    assert annotations["aistack.dev/log-data-classification"] == "confidential"
    assert annotations["aistack.dev/log-retention-days"] == "30"
    assert annotations["aistack.dev/approved-by"] == "CHG-1234"
    assert annotations["aistack.dev/fallback"] == "error"
    assert (
        annotations["aistack.dev/quality-alert"] == "aistack_model_quality_score below 0.8 for 180m"
    )
    conf = _by_name(graph, "ConfigMap")["chat-2-0-0-gateway"]["data"]["nginx.conf"]
    assert "aistack_full" in conf and "access_log /dev/stdout aistack_full;" in conf


# ---- bad input ----------------------------------------------------------------------------------


def test_bad_fields_are_one_config_error_naming_each():
    args = _args(
        versions=[{"version": "latest", "weight": 100}],
        image="vllm/vllm-openai:v0.11.0",
        maxReplicas=0,
    )
    del args["requestLogging"]
    with pytest.raises(ConfigError) as caught:
        engine.run(lambda: k8s.InferenceService("chat", args, team=_team()))
    fields = {problem.field for problem in caught.value.problems}
    expected = {"chat.versions.0.version", "chat.image", "chat.maxReplicas", "chat.requestLogging"}
    assert expected <= fields, fields


def test_what_the_plan_checks_is_one_config_error_too():
    args = _args(requestLogging="full", runtime="tensorrt-llm", autoscaling={"kind": "keda"})
    with pytest.raises(ConfigError) as caught:
        engine.run(lambda: k8s.InferenceService("chat", args, team=_team()))
    fields = {problem.field for problem in caught.value.problems}
    assert fields == {
        "chat.runtime",
        "chat.logDataClassification",
        "chat.logRetentionDays",
        "chat.autoscaling.prometheusUrl",
    }


def test_a_rollout_fits_the_quota_a_live_version_surges_and_a_standby_rolls_in_place():
    """../shared/research/k8s-fidelity-audit.md, defect 8: with the floor equal to the quota,
    the first pod-template change needed a surge pod the ResourceQuota refused, and the
    rollout stalled at maxUnavailable 0 until the up failed."""
    strategies = {
        name: d["spec"]["strategy"]["rollingUpdate"]
        for name, d in _by_name(_graph(gpus=6, maxReplicas=4), "Deployment").items()
    }
    assert strategies == {
        "chat-1-4-0": {"maxUnavailable": 0, "maxSurge": 1},  # live: serves while it rolls
        "chat-1-3-0": {"maxUnavailable": 1, "maxSurge": 0},  # standby: replaced in place
    }
    # Live at 4 + standby 1 + the live version's surge replica = 6 GPUs: 5 are refused.
    with pytest.raises(ConfigError) as error:
        _graph(gpus=5, maxReplicas=4)
    assert error.value.fields == ["chat.maxReplicas"]
    assert "while the versions roll, needs 6 GPUs" in str(error.value)
    with pytest.raises(ConfigError) as error:
        _graph(gpus=2, maxReplicas=1)
    assert error.value.fields == ["chat.minReplicas"]


def test_weights_the_namespace_cannot_reach_are_refused_before_any_pod_waits_in_init():
    """../shared/research/k8s-fidelity-audit.md, defect 6: the sync ran as an account with
    no Google identity, behind a default-deny with no way to Google's APIs."""

    def program(identity, egress):
        def build():
            team = _team(identity=identity, egress=egress)
            k8s.InferenceService("chat", _args(), team=team)

        return build

    with pytest.raises(ConfigError) as caught:
        engine.run(program(identity=False, egress=False))
    assert sorted(caught.value.fields) == ["chat.serviceAccount", "chat.team"]
    assert "no cloud identity" in str(caught.value) and "allowEgress" in str(caught.value)
    engine.run(program(identity=True, egress=True))


def test_team_tier_account_weights_and_quota_are_checked_together():
    def program():
        team = _team(gpus=2, tier="train", accounts=("trainer",))
        k8s.InferenceService(
            "chat",
            _args(
                versions=[{"version": "1.3.0", "weight": 50}, {"version": "1.4.0", "weight": 40}],
                governance={**GOVERNANCE, "environment": "prod"},
            ),
            team=team,
        )

    with pytest.raises(ConfigError) as caught:
        engine.run(program)
    fields = {problem.field for problem in caught.value.problems}
    assert {
        "chat.versions",  # 90, not 100
        "chat.versions.0.approvedBy",
        "chat.versions.1.approvedBy",
        "chat.team",
        "chat.serviceAccount",
        "chat.minReplicas",  # one replica and one rolling-update surge replica each: 4 > 2
    } <= fields


def test_moving_labels_are_refused_as_versions():
    with pytest.raises(ConfigError) as caught:
        k8s.InferenceServiceArgs.parse(_args(versions=[{"version": "latest", "weight": 100}]))
    assert "S7" in str(caught.value)
