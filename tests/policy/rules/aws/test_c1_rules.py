"""AIS-C1-01: GPU capacity is covered by a vCPU quota request - compliant and violating."""

import pulumi_aws as aws

from aistack import aws as aistack_aws
from aistack import engine
from tests.policy.rules.shared_verdicts import findings_of

RULE = "AIS-C1-01"
GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}


def _batch(name="train-ce", types=("g5.12xlarge",), max_vcpus=192, kind="SPOT", **extra):
    return aws.batch.ComputeEnvironment(
        name,
        type="MANAGED",
        compute_resources=aws.batch.ComputeEnvironmentComputeResourcesArgs(
            type=kind,
            max_vcpus=max_vcpus,
            min_vcpus=0,
            instance_types=list(types),
            subnets=["subnet-1"],
            security_group_ids=["sg-1"],
            instance_role="arn:aws:iam::123456789012:instance-profile/batch",
        ),
        **extra,
    )


def _quota(code, value, name=None, region=None):
    return aws.servicequotas.ServiceQuota(
        name or f"quota-{code}", service_code="ec2", quota_code=code, value=value, region=region
    )


def _findings(program):
    graph = engine.run(program, config={"aws:region": "us-east-1"})
    return {f.resource_name: f for f in findings_of(RULE, graph)}


def test_c1_batch_spot_environment_with_a_big_enough_quota_complies(verdicts):
    def program():
        _batch()
        _quota("L-3819A6DF", 192)

    assert verdicts(RULE, program) == {"train-ce": "compliant"}


def test_c1_batch_spot_environment_with_too_small_a_quota_violates(verdicts):
    def program():
        _batch()
        _quota("L-3819A6DF", 96)

    assert verdicts(RULE, program) == {"train-ce": "non-compliant"}
    finding = _findings(program)["train-ce"]
    assert "L-3819A6DF" in finding.message
    assert "shortfall 96 vCPUs" in finding.message
    assert finding.fix


def test_c1_capacity_without_any_quota_request_violates(verdicts):
    assert verdicts(RULE, _batch) == {"train-ce": "non-compliant"}
    assert "shortfall 192 vCPUs" in _findings(_batch)["train-ce"].message


def test_c1_an_on_demand_quota_does_not_cover_spot_capacity(verdicts):
    def program():
        _batch()
        _quota("L-DB2E81BA", 1000)

    assert verdicts(RULE, program) == {"train-ce": "non-compliant"}


def test_c1_a_quota_in_another_region_does_not_count(verdicts):
    def program():
        _batch()
        _quota("L-3819A6DF", 1000, region="us-west-2")

    assert verdicts(RULE, program) == {"train-ce": "non-compliant"}


def test_c1_batch_families_count_as_gpu_capacity(verdicts):
    def program():
        _batch(types=("p4d",), kind="EC2", max_vcpus=96)
        _quota("L-417A185B", 96)

    assert verdicts(RULE, program) == {"train-ce": "compliant"}


def test_c1_capacities_sharing_a_quota_need_their_sum(verdicts):
    def program():
        _batch("a", max_vcpus=96)
        _batch("b", max_vcpus=96)
        _quota("L-3819A6DF", 96)

    assert verdicts(RULE, program) == {"a": "non-compliant", "b": "non-compliant"}
    assert "192 together with b" in _findings(program)["a"].message


def _launch_template(instance_type, spot=False):
    return aws.ec2.LaunchTemplate(
        "gpu-lt",
        instance_type=instance_type,
        image_id="ami-123",
        instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="spot")
        if spot
        else None,
    )


def test_c1_asg_takes_its_instance_type_from_the_launch_template_by_id(verdicts):
    def program(quota_value):
        template = _launch_template("p4d.24xlarge")
        aws.autoscaling.Group(
            "train-asg",
            max_size=2,
            min_size=0,
            vpc_zone_identifiers=["subnet-1"],
            launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
                id=template.id, version="$Latest"
            ),
        )
        _quota("L-417A185B", quota_value)

    assert verdicts(RULE, lambda: program(192)) == {"train-asg": "compliant"}
    assert verdicts(RULE, lambda: program(96)) == {"train-asg": "non-compliant"}


def test_c1_asg_spot_launch_template_needs_the_spot_quota(verdicts):
    def program():
        template = _launch_template("g6e.12xlarge", spot=True)
        aws.autoscaling.Group(
            "serve-asg",
            max_size=2,
            min_size=0,
            vpc_zone_identifiers=["subnet-1"],
            launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
                id=template.id, version="$Latest"
            ),
        )
        _quota("L-DB2E81BA", 96)

    assert verdicts(RULE, program) == {"serve-asg": "non-compliant"}
    assert "L-3819A6DF" in _findings(program)["serve-asg"].message


def _mixed_asg(distribution, max_size=4):
    template = _launch_template("g5.xlarge")
    lt = aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs
    spec = aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs
    override = aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs
    aws.autoscaling.Group(
        "mixed-asg",
        max_size=max_size,
        min_size=0,
        vpc_zone_identifiers=["subnet-1"],
        mixed_instances_policy=aws.autoscaling.GroupMixedInstancesPolicyArgs(
            launch_template=lt(
                launch_template_specification=spec(launch_template_id=template.id),
                overrides=[
                    override(instance_type="g5.12xlarge"),
                    override(instance_type="g6.12xlarge"),
                ],
            ),
            instances_distribution=distribution,
        ),
    )


def test_c1_mixed_instances_overrides_split_by_the_instances_distribution(verdicts):
    distribution = aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
        on_demand_base_capacity=1, on_demand_percentage_above_base_capacity=0
    )

    def enough():
        _mixed_asg(distribution)
        _quota("L-DB2E81BA", 48)  # 1 on-demand base node x 48 vCPUs
        _quota("L-3819A6DF", 144)  # 3 spot nodes x 48 vCPUs

    def short():
        _mixed_asg(distribution)
        _quota("L-DB2E81BA", 48)
        _quota("L-3819A6DF", 96)

    assert verdicts(RULE, enough) == {"mixed-asg": "compliant"}
    assert verdicts(RULE, short) == {"mixed-asg": "non-compliant"}
    assert "shortfall 48 vCPUs" in _findings(short)["mixed-asg"].message


def test_c1_mixed_instances_without_a_distribution_are_all_on_demand(verdicts):
    def program():
        _mixed_asg(None)
        _quota("L-DB2E81BA", 192)

    assert verdicts(RULE, program) == {"mixed-asg": "compliant"}


def test_c1_eks_node_group_and_single_instance_are_capacity(verdicts):
    def program():
        aws.eks.NodeGroup(
            "gpu-nodes",
            cluster_name="c",
            node_role_arn="arn:aws:iam::123456789012:role/nodes",
            subnet_ids=["subnet-1"],
            instance_types=["g5.2xlarge"],
            capacity_type="SPOT",
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=0, min_size=0, max_size=4
            ),
        )
        aws.ec2.Instance("notebook", instance_type="g5.xlarge", ami="ami-123")
        _quota("L-3819A6DF", 32)

    assert verdicts(RULE, program) == {"gpu-nodes": "compliant", "notebook": "non-compliant"}


def test_c1_gpu_quota_component_covers_the_pools_it_was_sized_from(verdicts):
    def program():
        aistack_aws.GpuQuota(
            "quota",
            {
                "region": "us-east-1",
                "governance": GOVERNANCE,
                "needs": [
                    {
                        "pool": "training",
                        "instanceTypes": ["g5.12xlarge"],
                        "maxNodes": 4,
                        "market": "spot",
                    }
                ],
            },
        )
        _batch(max_vcpus=192)

    assert verdicts(RULE, program) == {"train-ce": "compliant"}


def test_c1_does_not_apply_without_gpu_capacity(verdicts):
    def program():
        _batch(types=("c5.large",), kind="EC2")
        _batch("fargate", types=(), kind="FARGATE")

    assert verdicts(RULE, program) == {"": "not-applicable"}


# ---- Karpenter NodePools ------------------------------------------------------------------

KARPENTER_POOL = {
    "governance": GOVERNANCE,
    "region": "us-east-1",
    "clusterName": "ml-prod",
    "controllerRoleName": "KarpenterController-ml-prod",
    "instanceTypes": ["g6.xlarge", "g6.2xlarge"],
    "maxSpotGpus": 8,
    "maxOnDemandGpus": 2,
    "amiAlias": "al2023@v20260714",
    "subnetSelectorTags": {"karpenter.sh/discovery": "ml-prod"},
    "securityGroupSelectorTags": {"karpenter.sh/discovery": "ml-prod"},
}


def _karpenter(with_quota):
    def program():
        pool = aistack_aws.KarpenterGpuPool("gpu", KARPENTER_POOL)
        if with_quota:
            aistack_aws.GpuQuota(
                "quota", {"governance": GOVERNANCE, "region": "us-east-1"}, pools=[pool]
            )

    return program


def test_c1_karpenter_node_pools_covered_by_the_pool_s_gpu_quota_comply(verdicts):
    assert verdicts(RULE, _karpenter(with_quota=True)) == {
        "gpu-spot": "compliant",
        "gpu-on-demand": "compliant",
    }


def test_c1_karpenter_node_pools_without_quota_violate_with_their_cpu_limit(verdicts):
    assert verdicts(RULE, _karpenter(with_quota=False)) == {
        "gpu-spot": "non-compliant",
        "gpu-on-demand": "non-compliant",
    }
    message = _findings(_karpenter(with_quota=False))["gpu-spot"].message
    assert "L-3819A6DF" in message and "limits.cpu" in message and "us-east-1" in message


def test_c1_a_hand_written_node_pool_without_a_region_says_so(verdicts):
    import pulumi_kubernetes as k8s

    def program():
        k8s.apiextensions.CustomResource(
            "bare-pool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": "bare"},
            spec={
                "template": {
                    "spec": {
                        "requirements": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": ["g6.xlarge"],
                            }
                        ]
                    }
                },
                "limits": {"cpu": "16"},
            },
        )

    finding = _findings(program)["bare-pool"]
    assert finding.status == "non-compliant"
    assert "unknown region (annotate the NodePool aistack.dev/region)" in finding.message
    assert "16 vCPUs" in finding.message  # on-demand: Karpenter's default capacity type
