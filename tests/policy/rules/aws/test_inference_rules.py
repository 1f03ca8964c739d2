"""Serving rules S1-S7 and G2-G5: an aws.InferenceTier complies; hand-made resources that
skip the protection violate."""

from __future__ import annotations

import json

import pulumi_aws as aws
import pytest

from aistack import aws as aistack_aws
from tests._harness.shared_graphs import shared
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-aws-inference_rules")

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm@sha256:" + "ab" * 32
DIGEST = "@sha256:" + "cd" * 32
DATASET = {"name": "tickets", "version": "v3", "source": "crm export", "licence": "internal"}
SERVING = {"aistack:workload": "inference"}


def tier(environment="dev", governance_classification=None, **overrides):
    governance = {**GOVERNANCE, "environment": environment}
    if governance_classification:
        governance["dataClassification"] = governance_classification
    network = aistack_aws.Network(
        "net",
        {
            "governance": governance,
            "region": "us-east-1",
            "trainingInstanceTypes": ["g5.12xlarge"],
            "inferenceInstanceTypes": ["g5.xlarge"],
        },
    )
    identity = aistack_aws.WorkloadIdentity("id", {"governance": governance})
    aistack_aws.DatasetBucket(
        "data",
        {"kind": "dataset", "region": "us-east-1", "governance": governance, "dataset": DATASET},
    )
    models = aistack_aws.DatasetBucket(
        "models", {"kind": "models", "region": "us-east-1", "governance": governance}
    )
    args = {
        "governance": governance,
        "region": "us-east-1",
        "modelName": "chat",
        "image": IMAGE,
        "instanceType": "g5.xlarge",
        "maxNodes": 4,
        "requestLogging": "metadata",
        "latencySloMs": 8000,
        "quality": {"threshold": 0.8},
        "machineImage": {"amiId": "ami-0123456789abcdef0"},
        "versions": [
            {"version": "1.4.0", "weight": 100, "approvedBy": "lead"},
            {"version": "1.3.2", "weight": 0, "approvedBy": "lead"},
        ],
        **overrides,
    }
    return aistack_aws.InferenceTier(
        "serve", args, network=network, identity=identity, models=models
    ), identity


def _tier():
    tier()


@pytest.fixture(scope="module")
def tier_graph():
    """The default tier, built once for the rules that judge it."""
    with shared(build(_tier)) as graph:
        yield graph


@pytest.fixture
def tier_verdicts(tier_graph):
    """`tier_verdicts(rule_id)`: the `verdicts` fixture's answer for `_tier`, on the shared
    build."""

    def _verdicts(rule_id: str) -> dict[str, str]:
        return verdicts_of(rule_id, tier_graph)

    return _verdicts


def serving_template(name, **tags):
    return aws.ec2.LaunchTemplate(name, instance_type="g5.xlarge", tags={**SERVING, **tags})


def serving_balancer(target_groups=1, internal=False):
    balancer = aws.lb.LoadBalancer("edge", internal=internal, tags=SERVING)
    groups = [
        aws.lb.TargetGroup(f"tg{i}", port=8080, protocol="HTTP") for i in range(target_groups)
    ]
    aws.lb.Listener(
        "edge-http",
        load_balancer_arn=balancer.arn,
        port=80,
        default_actions=[
            {
                "type": "forward",
                "forward": {"targetGroups": [{"arn": g.arn, "weight": 1} for g in groups]},
            }
        ],
    )
    return balancer


TEMPLATES = {"serve-v1-4-0-lt", "serve-v1-3-2-lt"}


def compliant(result, names):
    return {name: result[name] for name in names} == dict.fromkeys(names, "compliant")


# ---- S1 ------------------------------------------------------------------------------------


def test_s1_inference_tier_role_reaches_no_training_data(tier_verdicts):
    assert tier_verdicts("AIS-S1-02") == {"id-inference": "compliant"}


def test_s1_serving_role_granted_the_dataset_violates(verdicts):
    def program():
        _, identity = tier()
        dataset = aistack_aws.DatasetBucket(
            "more-data",
            {
                "kind": "dataset",
                "region": "us-east-1",
                "governance": GOVERNANCE,
                "dataset": DATASET,
            },
        )
        dataset.grant_read(identity.role("inference"), name="leak")

    assert verdicts("AIS-S1-02", program) == {"id-inference": "non-compliant"}


def test_s1_serving_role_with_broad_s3_managed_policy_violates(verdicts):
    def program():
        aws.s3.Bucket("ckpt", tags={"aistack:workload": "data-checkpoints"})
        role = aws.iam.Role("server", assume_role_policy="{}", tags=SERVING)
        aws.iam.RolePolicyAttachment(
            "server-s3",
            role=role.name,
            policy_arn="arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess",
        )

    assert verdicts("AIS-S1-02", program) == {"server": "non-compliant"}


def test_s1_serving_role_with_a_wildcard_s3_statement_violates(verdicts):
    def program():
        aws.s3.Bucket("raw", tags={"aistack:workload": "data-dataset"})
        role = aws.iam.Role("server", assume_role_policy="{}", tags=SERVING)
        aws.iam.RolePolicy(
            "server-read",
            role=role.id,
            policy=json.dumps(
                {"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
            ),
        )

    assert verdicts("AIS-S1-02", program) == {"server": "non-compliant"}


# ---- S2 ------------------------------------------------------------------------------------


def test_s2_inference_tier_serves_a_pinned_optimised_runtime(tier_verdicts):
    assert compliant(tier_verdicts("AIS-S2-01"), TEMPLATES)


def test_s2_own_image_declared_as_a_runtime_complies(verdicts):
    def program():
        serving_template(
            "custom",
            **{
                "aistack:serving-image": "registry.example.com/llm" + DIGEST,
                "aistack:runtime": "vllm",
            },
        )

    assert verdicts("AIS-S2-01", program) == {"custom": "compliant"}


def test_s2_unpinned_unoptimised_or_undeclared_images_violate(verdicts):
    def program():
        serving_template("mutable", **{"aistack:serving-image": "vllm/vllm-openai:latest"})
        serving_template("flask", **{"aistack:serving-image": "myorg/flask-model" + DIGEST})
        serving_template("unknown")

    assert verdicts("AIS-S2-01", program) == dict.fromkeys(
        ["mutable", "flask", "unknown"], "non-compliant"
    )


# ---- S3 ------------------------------------------------------------------------------------


def test_s3_inference_tier_is_behind_a_rate_limiting_waf(tier_verdicts):
    assert tier_verdicts("AIS-S3-01") == {"serve-alb": "compliant"}


def test_s3_internet_facing_load_balancer_without_waf_violates(verdicts):
    assert verdicts("AIS-S3-01", serving_balancer) == {"edge": "non-compliant"}


def test_s3_web_acl_without_a_rate_based_rule_violates(verdicts):
    def program():
        balancer = serving_balancer()
        acl = aws.wafv2.WebAcl(
            "acl",
            scope="REGIONAL",
            default_action={"allow": {}},
            visibility_config={
                "cloudwatchMetricsEnabled": True,
                "metricName": "acl",
                "sampledRequestsEnabled": True,
            },
        )
        aws.wafv2.WebAclAssociation("acl-edge", resource_arn=balancer.arn, web_acl_arn=acl.arn)

    assert verdicts("AIS-S3-01", program) == {"edge": "non-compliant"}


def test_s3_a_teams_internal_load_balancer_is_not_concerned(verdicts):
    result = verdicts("AIS-S3-01", lambda: serving_balancer(internal=True))
    assert result == {"": "not-applicable"}


def test_s3_inference_tier_groups_have_a_bounded_maximum(tier_verdicts):
    result = tier_verdicts("AIS-S3-02")
    assert result == {"serve-v1-4-0-asg": "compliant", "serve-v1-3-2-asg": "compliant"}


def test_s3_serving_group_without_a_real_cap_violates(verdicts):
    def program():
        group = aws.lb.TargetGroup("tg", port=8080, protocol="HTTP")
        aws.autoscaling.Group("fleet", min_size=1, max_size=500, target_group_arns=[group.arn])

    assert verdicts("AIS-S3-02", program) == {"fleet": "non-compliant"}


# ---- S4 ------------------------------------------------------------------------------------


def test_s4_inference_tier_caches_in_front(tier_verdicts):
    assert compliant(tier_verdicts("AIS-S4-01"), TEMPLATES)


def test_s4_serving_without_the_gateway_cache_violates(verdicts):
    def program():
        serving_template("off", **{"aistack:gateway-cache": "off"})
        serving_template("silent")

    assert verdicts("AIS-S4-01", program) == {"off": "non-compliant", "silent": "non-compliant"}


# ---- S5 ------------------------------------------------------------------------------------


def test_s5_inference_tier_has_latency_and_error_alarms_and_a_dashboard(tier_verdicts):
    assert tier_verdicts("AIS-S5-01") == {"serve-alb": "compliant"}


def test_s5_serving_load_balancer_with_an_average_latency_alarm_only_violates(verdicts):
    def program():
        balancer = serving_balancer()
        aws.cloudwatch.MetricAlarm(
            "avg-latency",
            namespace="AWS/ApplicationELB",
            metric_name="TargetResponseTime",
            dimensions={"LoadBalancer": balancer.arn_suffix},
            statistic="Average",
            period=60,
            evaluation_periods=1,
            comparison_operator="GreaterThanThreshold",
            threshold=1,
        )

    assert verdicts("AIS-S5-01", program) == {"edge": "non-compliant"}


# ---- S6 ------------------------------------------------------------------------------------


def test_s6_inference_tier_keeps_the_previous_version_behind_the_listener(tier_verdicts):
    assert tier_verdicts("AIS-S6-01") == {"serve-alb": "compliant"}


def test_s6_one_target_group_leaves_nothing_to_roll_back_to(verdicts):
    assert verdicts("AIS-S6-01", serving_balancer) == {"edge": "non-compliant"}
    assert verdicts("AIS-S6-01", lambda: serving_balancer(2)) == {"edge": "compliant"}


def test_s6_is_advisory():
    from aistack import policy

    assert next(r for r in policy.all_rules() if r.id == "AIS-S6-01").severity == "advisory"


# ---- S7 ------------------------------------------------------------------------------------


def test_s7_inference_tier_versions_are_explicit(tier_verdicts):
    assert compliant(tier_verdicts("AIS-S7-01"), TEMPLATES)


def test_s7_latest_or_missing_model_version_violates(verdicts):
    def program():
        serving_template("moving", **{"aistack:model-version": "latest"})
        serving_template("unnamed")

    assert verdicts("AIS-S7-01", program) == {"moving": "non-compliant", "unnamed": "non-compliant"}


# ---- G2-G5 ---------------------------------------------------------------------------------


def test_g2_inference_tier_declares_request_logging(tier_verdicts):
    assert compliant(tier_verdicts("AIS-G2-01"), TEMPLATES)


def test_g2_full_logging_without_classification_or_no_declaration_violates(verdicts):
    def program():
        serving_template("full", **{"aistack:request-logging": "full"})
        serving_template("undeclared")

    assert verdicts("AIS-G2-01", program) == {
        "full": "non-compliant",
        "undeclared": "non-compliant",
    }


def test_g3_prod_inference_tier_versions_are_approved(verdicts):
    assert compliant(verdicts("AIS-G3-01", lambda: tier("prod")), TEMPLATES)


def test_g3_prod_serving_without_approver_violates_and_dev_is_not_concerned(verdicts):
    def program():
        serving_template("prod-unapproved", **{"aistack:environment": "prod"})
        serving_template("dev-unapproved", **{"aistack:environment": "dev"})

    assert verdicts("AIS-G3-01", program) == {"prod-unapproved": "non-compliant"}


def test_g4_inference_tier_alarms_on_model_quality(tier_verdicts):
    assert tier_verdicts("AIS-G4-01") == {"serve-alb": "compliant"}


def test_g4_serving_without_a_quality_alarm_violates(verdicts):
    def program():
        serving_balancer()
        aws.cloudwatch.MetricAlarm(
            "cpu",
            namespace="AWS/EC2",
            metric_name="CPUUtilization",
            statistic="Average",
            period=60,
            evaluation_periods=1,
            comparison_operator="GreaterThanThreshold",
            threshold=90,
        )

    assert verdicts("AIS-G4-01", program) == {"edge": "non-compliant"}


def test_g5_inference_tier_declares_its_fallback(tier_verdicts):
    assert compliant(tier_verdicts("AIS-G5-01"), TEMPLATES)


@pytest.mark.parametrize("fallback", [None, "retry-forever"])
def test_g5_undeclared_fallback_violates(verdicts, fallback):
    def program():
        extra = {"aistack:fallback": fallback} if fallback else {}
        serving_template("node", **extra)

    assert verdicts("AIS-G5-01", program) == {"node": "non-compliant"}


# ---- D5: confidential data over TLS --------------------------------------------------------
# checkov flags plain-HTTP application load balancers as CKV_AWS_2 ("ALB protocol is HTTPS"),
# CKV_AWS_103 ("ALB is using at least TLS 1.2") and CKV2_AWS_20 ("ALB redirects HTTP requests
# into HTTPS ones"); an HTTPS listener without `sslPolicy` gets ELBSecurityPolicy-2016-08,
# which accepts TLS 1.0 (ELB User Guide, "Security policies for your Application Load
# Balancer").

TLS_RULE = "AIS-D5-02"
CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/0d5e2f1a-1111-2222-3333-444455556666"
CONFIDENTIAL = {"aistack:workload": "inference", "aistack:data-classification": "confidential"}


def _confidential_balancer(*listeners, tags=CONFIDENTIAL):
    balancer = aws.lb.LoadBalancer("edge", internal=True, tags=tags)
    group = aws.lb.TargetGroup("tg", port=8080, protocol="HTTP")
    forward = [{"type": "forward", "targetGroupArn": group.arn}]
    redirect = [{"type": "redirect", "redirect": {"protocol": "HTTPS", "port": "443",
                                                   "statusCode": "HTTP_301"}}]  # fmt: skip
    for name, protocol, policy, action in listeners:
        aws.lb.Listener(
            name,
            load_balancer_arn=balancer.arn,
            port=443 if protocol == "HTTPS" else 80,
            protocol=protocol,
            ssl_policy=policy,
            certificate_arn=CERTIFICATE if protocol == "HTTPS" else None,
            default_actions=forward if action == "forward" else redirect,
        )


def test_d5_the_inference_tier_with_a_certificate_complies(verdicts):
    def program():
        tier(certificateArn=CERTIFICATE, governance_classification="confidential")

    assert verdicts(TLS_RULE, program) == {"serve-alb": "compliant"}


def test_d5_the_inference_tier_with_the_explicit_opt_out_complies(verdicts):
    def program():
        tier(allowPlaintextHttp=True, governance_classification="confidential")

    assert verdicts(TLS_RULE, program) == {"serve-alb": "compliant"}


def test_d5_https_with_tls_1_2_and_a_redirect_on_80_complies(verdicts):
    def program():
        _confidential_balancer(
            ("edge-https", "HTTPS", "ELBSecurityPolicy-TLS13-1-2-2021-06", "forward"),
            ("edge-http", "HTTP", None, "redirect"),
        )

    assert verdicts(TLS_RULE, program) == {"edge": "compliant"}


@pytest.mark.parametrize(
    "listeners",
    [
        [("edge-http", "HTTP", None, "forward")],
        [("edge-https", "HTTPS", None, "forward")],  # AWS's default policy: TLS 1.0 too
        [("edge-https", "HTTPS", "ELBSecurityPolicy-TLS13-1-1-2021-06", "forward")],
        [
            ("edge-https", "HTTPS", "ELBSecurityPolicy-TLS13-1-2-2021-06", "forward"),
            ("edge-http", "HTTP", None, "forward"),
        ],
    ],
)
def test_d5_plaintext_or_old_tls_for_confidential_data_violates(verdicts, listeners):
    result = verdicts(TLS_RULE, lambda: _confidential_balancer(*listeners))
    assert result == {"edge": "non-compliant"}


def test_d5_internal_data_is_not_concerned(verdicts):
    def program():
        _confidential_balancer(
            ("edge-http", "HTTP", None, "forward"),
            tags={"aistack:workload": "inference", "aistack:data-classification": "internal"},
        )

    assert verdicts(TLS_RULE, program) == {"": "not-applicable"}
