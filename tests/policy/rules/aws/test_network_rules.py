"""Rules over networks: C2 (GPU capacity in offering zones) and S1 (serving apart from
training), each with compliant and violating stacks of raw resources."""

import pulumi_aws as aws
import pytest

from aistack import aws as aistack_aws
from aistack import engine
from tests.policy.rules.shared_verdicts import findings_of

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}
TRAINING = {"aistack:workload": "training"}
INFERENCE = {"aistack:workload": "inference"}


def _findings(rule_id, program):
    graph = engine.run(program, config={"aws:region": "us-east-1"})
    return {f.resource_name: f for f in findings_of(rule_id, graph)}


def _vpc():
    return aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")


def _subnet(vpc, name, zone, cidr, tags=None):
    return aws.ec2.Subnet(
        name, vpc_id=vpc.id, cidr_block=cidr, availability_zone=zone, tags=tags or {}
    )


def _batch(name, subnets, types, groups=(), tags=None):
    return aws.batch.ComputeEnvironment(
        name,
        type="MANAGED",
        compute_resources=aws.batch.ComputeEnvironmentComputeResourcesArgs(
            type="EC2",
            max_vcpus=192,
            instance_types=types,
            subnets=[s.id for s in subnets],
            security_group_ids=[g.id for g in groups],
            instance_role="arn:aws:iam::123456789012:instance-profile/batch",
        ),
        tags=tags,
    )


def _asg(name, subnets, instance_type, groups=(), workload=None):
    template = aws.ec2.LaunchTemplate(
        f"{name}-lt",
        instance_type=instance_type,
        vpc_security_group_ids=[g.id for g in groups],
    )
    tags = [
        aws.autoscaling.GroupTagArgs(
            key="aistack:workload", value=workload, propagate_at_launch=True
        )
    ]
    return aws.autoscaling.Group(
        name,
        min_size=0,
        max_size=2,
        vpc_zone_identifiers=[s.id for s in subnets],
        launch_template=aws.autoscaling.GroupLaunchTemplateArgs(id=template.id, version="$Latest"),
        tags=tags if workload else None,
    )


# ---- AIS-C2-01 ---------------------------------------------------------------------------


def test_c2_batch_in_network_training_subnets_complies(verdicts):
    def program():
        net = aistack_aws.Network(
            "net",
            {
                "governance": GOVERNANCE,
                "region": "us-east-1",
                "trainingInstanceTypes": ["p5.48xlarge"],
            },
        )
        aws.batch.ComputeEnvironment(
            "train",
            type="MANAGED",
            compute_resources=aws.batch.ComputeEnvironmentComputeResourcesArgs(
                type="EC2",
                max_vcpus=192,
                instance_types=["p5.48xlarge"],
                subnets=net.subnet_ids("training"),
                security_group_ids=[net.security_group_id("training")],
            ),
        )

    assert verdicts("AIS-C2-01", program) == {"train": "compliant"}


def test_c2_batch_with_a_subnet_in_a_zone_without_the_type_violates():
    # p5.48xlarge is offered in us-east-1 a, c, d and f, not b.
    def program():
        vpc = _vpc()
        good = _subnet(vpc, "good", "us-east-1a", "10.0.0.0/24")
        bad = _subnet(vpc, "bad", "us-east-1b", "10.0.1.0/24")
        _batch("train", [good, bad], ["p5.48xlarge"])

    finding = _findings("AIS-C2-01", program)["train"]
    assert finding.status == "non-compliant"
    for named in ("bad", "us-east-1b", "p5.48xlarge"):
        assert named in finding.message
    assert "subnet good" not in finding.message


def test_c2_a_type_no_subnet_zone_offers_violates_even_if_another_type_fits():
    # us-east-1b offers g5.xlarge but not p5en.48xlarge (a, f only).
    def program():
        vpc = _vpc()
        subnet = _subnet(vpc, "b", "us-east-1b", "10.0.1.0/24")
        _batch("mixed", [subnet], ["g5.xlarge", "p5en.48xlarge"])

    finding = _findings("AIS-C2-01", program)["mixed"]
    assert finding.status == "non-compliant"
    assert "p5en.48xlarge is offered in none of the subnets' zones" in finding.message


def test_c2_asg_takes_its_type_from_the_launch_template(verdicts):
    def program():
        vpc = _vpc()
        _asg("serve-ok", [_subnet(vpc, "c", "us-east-1c", "10.0.2.0/24")], "p4d.24xlarge")
        _asg("serve-bad", [_subnet(vpc, "d", "us-east-1d", "10.0.3.0/24")], "p4d.24xlarge")

    assert verdicts("AIS-C2-01", program) == {
        "serve-ok": "compliant",
        "serve-bad": "non-compliant",
    }


def test_c2_a_batch_family_name_is_checked_against_the_family(verdicts):
    def program():
        vpc = _vpc()
        _batch("fam", [_subnet(vpc, "b", "us-east-1b", "10.0.1.0/24")], ["p5en"])

    assert verdicts("AIS-C2-01", program) == {"fam": "non-compliant"}


def test_c2_does_not_apply_to_cpu_capacity(verdicts):
    def program():
        vpc = _vpc()
        _batch("cpu", [_subnet(vpc, "b", "us-east-1b", "10.0.1.0/24")], ["m5.large", "optimal"])

    assert verdicts("AIS-C2-01", program) == {"": "not-applicable"}


# ---- AIS-S1-01 ---------------------------------------------------------------------------


def _groups(vpc):
    training = aws.ec2.SecurityGroup("training-sg", vpc_id=vpc.id, tags=TRAINING)
    inference = aws.ec2.SecurityGroup("inference-sg", vpc_id=vpc.id, tags=INFERENCE)
    alb = aws.ec2.SecurityGroup("alb-sg", vpc_id=vpc.id)
    aws.vpc.SecurityGroupIngressRule(
        "training-self",
        security_group_id=training.id,
        ip_protocol="-1",
        referenced_security_group_id=training.id,
    )
    aws.vpc.SecurityGroupIngressRule(
        "inference-from-alb",
        security_group_id=inference.id,
        ip_protocol="tcp",
        from_port=8080,
        to_port=8080,
        referenced_security_group_id=alb.id,
    )
    return training, inference, alb


def _separated(extra=None):
    def program():
        vpc = _vpc()
        training, inference, alb = _groups(vpc)
        train_net = _subnet(vpc, "train-a", "us-east-1a", "10.0.0.0/24")
        serve_net = _subnet(vpc, "serve-a", "us-east-1a", "10.0.1.0/24")
        lb_a = _subnet(vpc, "lb-a", "us-east-1a", "10.0.2.0/24")
        lb_b = _subnet(vpc, "lb-b", "us-east-1b", "10.0.3.0/24")
        aws.lb.LoadBalancer(
            "alb", internal=True, security_groups=[alb.id], subnets=[lb_a.id, lb_b.id]
        )
        _batch("train", [train_net], ["p5.48xlarge"], [training], tags=TRAINING)
        _asg("serve", [serve_net], "g6e.xlarge", [inference], workload="inference")
        if extra:
            extra(
                vpc=vpc,
                training=training,
                inference=inference,
                alb=alb,
                serve_net=serve_net,
                train_net=train_net,
            )

    return program


def test_s1_separate_subnets_and_groups_comply(verdicts):
    assert verdicts("AIS-S1-01", _separated()) == {
        "training-sg": "compliant",
        "train": "compliant",
    }


def test_s1_the_network_component_complies_on_its_own(verdicts):
    def program():
        aistack_aws.Network(
            "net",
            {
                "governance": GOVERNANCE,
                "region": "us-east-1",
                "trainingInstanceTypes": ["p5.48xlarge"],
                "inferenceInstanceTypes": ["g6e.xlarge"],
            },
        )

    assert verdicts("AIS-S1-01", program) == {"net-training": "compliant"}


def test_s1_training_ingress_from_the_inference_group_violates():
    def extra(training, inference, **_):
        aws.vpc.SecurityGroupIngressRule(
            "training-from-inference",
            security_group_id=training.id,
            ip_protocol="tcp",
            from_port=22,
            to_port=22,
            referenced_security_group_id=inference.id,
        )

    finding = _findings("AIS-S1-01", _separated(extra))["training-sg"]
    assert finding.status == "non-compliant"
    assert "training-from-inference admits inference-side group inference-sg" in finding.message


def test_s1_training_ingress_from_the_load_balancer_violates():
    def extra(training, alb, **_):
        aws.ec2.SecurityGroupRule(
            "training-from-alb",
            type="ingress",
            security_group_id=training.id,
            protocol="tcp",
            from_port=8080,
            to_port=8080,
            source_security_group_id=alb.id,
        )

    finding = _findings("AIS-S1-01", _separated(extra))["training-sg"]
    assert finding.status == "non-compliant" and "alb-sg" in finding.message


def test_s1_training_ingress_from_a_cidr_covering_inference_subnets_violates():
    def extra(training, **_):
        aws.vpc.SecurityGroupIngressRule(
            "training-from-vpc",
            security_group_id=training.id,
            ip_protocol="-1",
            cidr_ipv4="10.0.0.0/16",
        )

    finding = _findings("AIS-S1-01", _separated(extra))["training-sg"]
    assert finding.status == "non-compliant"
    assert "10.0.0.0/16" in finding.message and "serve-a" in finding.message


@pytest.mark.parametrize("shared", ["subnet", "group"])
def test_s1_training_capacity_sharing_a_subnet_or_group_with_inference_violates(shared):
    def extra(vpc, training, inference, serve_net, train_net, **_):
        if shared == "subnet":
            _batch("train-2", [serve_net], ["p5.48xlarge"], [training], tags=TRAINING)
        else:
            _batch("train-2", [train_net], ["p5.48xlarge"], [inference], tags=TRAINING)

    findings = _findings("AIS-S1-01", _separated(extra))
    assert findings["train"].status == "compliant"
    assert findings["train-2"].status == "non-compliant"
    expected = "serve-a" if shared == "subnet" else "inference-sg"
    assert expected in findings["train-2"].message


def test_s1_does_not_apply_without_an_inference_side(verdicts):
    def program():
        vpc = _vpc()
        training = aws.ec2.SecurityGroup("training-sg", vpc_id=vpc.id, tags=TRAINING)
        _batch(
            "train", [_subnet(vpc, "a", "us-east-1a", "10.0.0.0/24")], ["p5.48xlarge"], [training]
        )

    assert verdicts("AIS-S1-01", program) == {"": "not-applicable"}
