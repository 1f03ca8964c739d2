"""aws.KarpenterGpuPool: what it renders is what Karpenter v1.14.1 and AWS take, and what
the queue/pool contract promises.

Platform facts are checked against their sources, not against the simulated cloud: every
Karpenter object against the upstream CRDs kept under aistack/scan/data/crds/
karpenter-v1.14.1/ (strict: a field the API server would prune is an error); the
interruption queue and its rules against Karpenter's getting-started CloudFormation
(karpenter-provider-aws v1.14.1, website/content/en/docs/getting-started/
getting-started-with-karpenter/cloudformation.yaml), transcribed below; the IAM documents
against the IAM action database and the AWS resources against checkov.
"""

from __future__ import annotations

import copy
import json

import pytest

from aistack import aws
from aistack.aws import _karpenter as crd
from aistack.errors import ConfigError
from aistack.queries.k8s import custom_manifests
from aistack.scan import SkipList, iam
from aistack.scan.crd_schemas import validate_custom_resource
from tests._harness import checkov_service
from tests._harness.shared_graphs import shared
from tests.aws.conftest import GOVERNANCE, run_in_us_east_1

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"

#: Karpenter's CloudFormation v1.14.1, transcribed: each rule's EventPattern
#: (ScheduledChangeRule, SpotInterruptionRule, RebalanceRule, InstanceStateChangeRule,
#: CapacityReservationInterruptionRule), the queue's properties and its policy's principals.
CLOUDFORMATION_PATTERNS = [
    {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
    {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
    },
]
CLOUDFORMATION_QUEUE = {"MessageRetentionPeriod": 300, "SqsManagedSseEnabled": True}
CLOUDFORMATION_SENDERS = {"events.amazonaws.com", "sqs.amazonaws.com"}
#: KarpenterNodeRole's ManagedPolicyArns in the same template.
CLOUDFORMATION_NODE_POLICIES = {
    "AmazonEKS_CNI_Policy",
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
}


#: A pool on cluster ml-prod: 8 Spot GPUs, 2 on-demand, L4 in two sizes.
POOL_ARGS = {
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


@pytest.fixture
def pool_args() -> dict:
    return copy.deepcopy(POOL_ARGS)


@pytest.fixture
def pool_run(run, pool_args):
    """Run one pool; returns (graph, component)."""

    def _pool_run(**changes):
        holder = {}

        def program():
            holder["pool"] = aws.KarpenterGpuPool("gpu", {**pool_args, **changes})

        graph = run(program)
        return graph, holder["pool"]

    return _pool_run


@pytest.fixture(scope="module")
def default_pool():
    """`pool_run()`'s (graph, component) for POOL_ARGS as they are, built once for the tests
    that only read them."""
    holder = {}

    def program():
        holder["pool"] = aws.KarpenterGpuPool("gpu", copy.deepcopy(POOL_ARGS))

    with shared(run_in_us_east_1(program)) as graph:
        yield graph, holder["pool"]


def _spec(graph, name):
    return graph.named(name).inputs["spec"]


# ---- the Karpenter objects ------------------------------------------------------------------


def test_every_karpenter_object_validates_against_the_kept_v1_14_1_crds(default_pool):
    graph, _ = default_pool
    manifests = custom_manifests(graph)
    kinds = sorted(m["kind"] for _, m in manifests)
    assert kinds == ["EC2NodeClass", "NodePool", "NodePool"]
    for resource, manifest in manifests:
        assert validate_custom_resource(manifest) == [], resource.name


@pytest.mark.parametrize(
    "path, bad",
    [
        # v1beta1's value, renamed WhenEmptyOrUnderutilized in v1: not in the enum.
        (("spec", "disruption"), {"consolidationPolicy": "WhenUnderutilized"}),
        (("spec", "disruption"), {"expireAfter": "720h"}),  # moved to template.spec in v1
        (("spec",), {"associatePublicIpAddress": False}),  # the field is ...IPAddress
    ],
)
def test_a_wrong_field_is_caught_by_the_crd(default_pool, path, bad):
    graph, _ = default_pool
    manifests = {m["kind"] + m["metadata"]["name"]: m for _, m in custom_manifests(graph)}
    manifest = copy.deepcopy(
        manifests["EC2NodeClassgpu" if "associatePublicIpAddress" in bad else "NodePoolgpu-spot"]
    )
    target = manifest
    for key in path:
        target = target[key]
    target.update(bad)
    assert validate_custom_resource(manifest) != []


def test_a_wrong_field_in_a_typed_model_is_a_config_error_before_deploy():
    with pytest.raises(ConfigError) as error:
        crd.Disruption.parse({"consolidateAfter": "300s", "expireAfter": "720h"})
    assert "expireAfter" in str(error.value)
    with pytest.raises(ConfigError):
        crd.Disruption.parse({"consolidateAfter": "5 minutes"})  # the CRD's pattern
    with pytest.raises(ConfigError):
        crd.EC2NodeClassSpec.parse(
            {
                **_node_class_minimum(),
                "tags": {"karpenter.sh/nodepool": "x"},  # CEL: restricted tag
            }
        )


def _node_class_minimum() -> dict:
    return {
        "role": "r",
        "amiSelectorTerms": [{"alias": "al2023@v20260714"}],
        "subnetSelectorTerms": [{"tags": {"a": "b"}}],
        "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": [],
    }


def test_spot_is_tried_first_and_each_nodepool_pins_one_capacity_type(default_pool):
    graph, pool = default_pool
    spot, on_demand = _spec(graph, "gpu-spot"), _spec(graph, "gpu-on-demand")
    assert spot["weight"] > on_demand["weight"]
    for spec, capacity in ((spot, "spot"), (on_demand, "on-demand")):
        requirements = {r["key"]: r for r in spec["template"]["spec"]["requirements"]}
        assert requirements["karpenter.sh/capacity-type"] == {
            "key": "karpenter.sh/capacity-type",
            "operator": "In",
            "values": [capacity],
        }
        assert requirements["node.kubernetes.io/instance-type"]["values"] == [
            "g6.xlarge",
            "g6.2xlarge",
        ]
        assert spec["template"]["spec"]["nodeClassRef"] == {
            "group": "karpenter.k8s.aws",
            "kind": "EC2NodeClass",
            "name": "gpu",
        }
    assert pool.node_pool_names == {"spot": "gpu-spot", "on-demand": "gpu-on-demand"}


def test_gpu_and_cpu_limits_cap_each_capacity_type(default_pool):
    graph, _ = default_pool
    # g6.xlarge: 1 GPU, 4 vCPUs; g6.2xlarge: 1 GPU, 8 vCPUs (catalog). 8 Spot GPUs on the
    # larger type are 64 vCPUs; 2 on-demand GPUs are 16.
    assert _spec(graph, "gpu-spot")["limits"] == {"nvidia.com/gpu": "8", "cpu": "64"}
    assert _spec(graph, "gpu-on-demand")["limits"] == {"nvidia.com/gpu": "2", "cpu": "16"}


def test_a_capacity_with_no_gpus_gets_no_nodepool(pool_run):
    graph, pool = pool_run(maxOnDemandGpus=0)
    assert [r.name for r in graph.of_type(NODEPOOL)] == ["gpu-spot"]
    assert [f["capacity"] for f in pool.kueue_flavors()] == ["spot"]


def test_empty_nodes_are_consolidated_after_a_delay_and_nodes_expire(pool_run):
    graph, _ = pool_run(consolidateAfter="10m")
    for name in ("gpu-spot", "gpu-on-demand"):
        spec = _spec(graph, name)
        # WhenEmpty: Karpenter never evicts a running training pod to repack nodes.
        assert spec["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"}
        assert spec["template"]["spec"]["expireAfter"] == "720h"
        assert spec["template"]["spec"]["terminationGracePeriod"] == "48h"


@pytest.mark.parametrize("field", ["consolidateAfter", "expireAfter"])
def test_never_is_refused_for_consolidation_and_expiry(pool_args, field):
    with pytest.raises(ConfigError) as error:
        aws.KarpenterGpuPoolArgs.parse({**pool_args, field: "Never"})
    assert field in error.value.fields[0]


def test_nodes_carry_the_pool_contract_labels_and_the_gpu_taint(default_pool):
    graph, _ = default_pool
    template = _spec(graph, "gpu-spot")["template"]
    assert template["metadata"]["labels"] == {
        "aistack.dev/pool": "gpu",
        "aistack.dev/capacity": "spot",
    }
    assert template["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]


def test_kueue_flavors_select_exactly_the_nodes_of_their_nodepool(default_pool):
    graph, pool = default_pool
    flavors = pool.kueue_flavors()
    assert [f["name"] for f in flavors] == ["gpu-spot", "gpu-on-demand"]
    for flavor in flavors:
        spec = _spec(graph, flavor["name"])
        template = spec["template"]
        # What a node of this NodePool carries: its template labels plus the well-known
        # labels its requirements pin to one value (Karpenter labels nodes with them).
        node_labels = dict(template["metadata"]["labels"])
        for requirement in template["spec"]["requirements"]:
            if requirement["operator"] == "In" and len(requirement["values"]) == 1:
                node_labels[requirement["key"]] = requirement["values"][0]
        assert flavor["nodeLabels"].items() <= node_labels.items()
        # Every taint of the node is tolerated by the flavor's tolerations.
        for taint in template["spec"]["taints"]:
            assert any(
                t["key"] == taint["key"]
                and t["effect"] == taint["effect"]
                and (t["operator"] == "Exists" or t.get("value") == taint.get("value"))
                for t in flavor["tolerations"]
            )
        assert flavor["gpus"] == int(spec["limits"]["nvidia.com/gpu"])
        assert flavor["gpuResource"] == "nvidia.com/gpu"
        assert flavor["capacity"] == flavor["nodeLabels"]["aistack.dev/capacity"]
    # Plain values, not Outputs: Kueue objects name them literally.
    json.dumps(flavors)


def test_node_class_is_imdsv2_one_hop_encrypted_raid0_and_pinned(pool_run):
    graph, pool = pool_run(rootVolumeGib=300)
    spec = _spec(graph, "gpu-node-class")
    assert spec["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }
    assert spec["instanceStorePolicy"] == "RAID0"
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
    assert spec["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "rootVolume": True,
            "ebs": {
                "volumeSize": "300Gi",
                "volumeType": "gp3",
                "encrypted": True,
                "deleteOnTermination": True,
            },
        }
    ]
    assert spec["associatePublicIPAddress"] is False
    assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "ml-prod"}}]
    assert spec["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "ml-prod"}}]
    # The node role by name: Karpenter creates the instance profile for it.
    assert spec["role"] == graph.named("gpu-node").outputs["name"]
    assert "instanceProfile" not in spec


@pytest.mark.parametrize(
    "alias", ["al2023@latest", "al2023", "bottlerocket@v1.20.4", "al2@v20240807"]
)
def test_an_unpinned_or_unsupported_ami_alias_is_refused(pool_args, alias):
    with pytest.raises(ConfigError) as error:
        aws.KarpenterGpuPoolArgs.parse({**pool_args, "amiAlias": alias})
    assert error.value.fields == ["amiAlias"]


# Platform fact: awslabs/amazon-eks-ami CHANGELOG.md, the first section listing AMI type
# AL2023_x86_64_NVIDIA is "# AMI Release v20240924" (its v20240917 section lists only
# AL2023_*_STANDARD and AL2); the table and its sources are aistack/catalog/eks_amis.py.
@pytest.mark.parametrize("alias", ["al2023@v20240807", "al2023@v20240917"])
def test_an_ami_alias_before_the_first_nvidia_release_is_one_error_with_the_fix(pool_args, alias):
    with pytest.raises(ConfigError) as error:
        aws.KarpenterGpuPoolArgs.parse({**pool_args, "amiAlias": alias, "maxSpotGpus": -1})
    # Collected with the other bad fields, not raised alone.
    assert sorted(error.value.fields) == ["amiAlias", "maxSpotGpus"]
    (problem,) = [p for p in error.value.problems if p.field == "amiAlias"]
    assert "no NVIDIA variant" in problem.message
    assert "nodes never launch" in problem.message
    assert "on or after v20240924" in problem.fix
    assert "'al2023@v20260714'" in problem.fix


@pytest.mark.parametrize("alias", ["al2023@v20240924", "al2023@v20241024", "al2023@v20260714"])
def test_an_ami_alias_from_the_first_nvidia_release_on_is_taken(pool_args, alias):
    assert aws.KarpenterGpuPoolArgs.parse({**pool_args, "amiAlias": alias}).ami_alias == alias


def test_every_problem_is_reported_at_once_before_anything_is_registered(run, pool_args):
    registered = []

    def program():
        try:
            aws.KarpenterGpuPool(
                "GPU_Pool",
                {
                    **pool_args,
                    "region": "eu-central-1",
                    "instanceTypes": ["g6.xlarge", "g9.huge"],
                    "maxSpotGpus": 0,
                    "maxOnDemandGpus": 0,
                },
            )
        except ConfigError as error:
            registered.append(error)

    graph = run(program)
    assert graph.resources == []
    fields = registered[0].fields
    assert {
        "GPU_Pool.region",
        "GPU_Pool.instanceTypes[1]",
        "GPU_Pool.maxSpotGpus",
        "GPU_Pool",
    } <= set(fields)


# ---- AWS: node identity, interruption queue, controller grants -----------------------------


def test_the_node_role_has_the_eks_node_policies_and_an_ec2_linux_access_entry(default_pool):
    graph, _ = default_pool
    attached = {
        r.inputs["policyArn"].rsplit("/", 1)[-1]
        for r in graph.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    }
    assert attached == CLOUDFORMATION_NODE_POLICIES
    trust = json.loads(graph.named("gpu-node").inputs["assumeRolePolicy"])
    assert [s["Principal"] for s in trust["Statement"]] == [{"Service": "ec2.amazonaws.com"}]
    entry = graph.named("gpu-nodes")
    assert entry.inputs["type"] == "EC2_LINUX"
    assert entry.inputs["clusterName"] == "ml-prod"
    assert entry.inputs["principalArn"] == graph.named("gpu-node").outputs["arn"]
    # No instance profile of our own: Karpenter makes one from the EC2NodeClass's role.
    assert graph.of_type("aws:iam/instanceProfile:InstanceProfile") == []


def test_the_cni_policy_can_stay_with_the_vpc_cni_s_own_role(pool_run):
    graph, _ = pool_run(cniPolicy=False)
    attached = {
        r.inputs["policyArn"].rsplit("/", 1)[-1]
        for r in graph.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    }
    assert "AmazonEKS_CNI_Policy" not in attached


def test_the_interruption_queue_and_rules_are_karpenter_s_cloudformation(default_pool):
    graph, pool = default_pool
    queue = graph.named("gpu-interruption")
    assert queue.type == "aws:sqs/queue:Queue"
    assert queue.inputs["messageRetentionSeconds"] == CLOUDFORMATION_QUEUE["MessageRetentionPeriod"]
    assert queue.inputs["sqsManagedSseEnabled"] is CLOUDFORMATION_QUEUE["SqsManagedSseEnabled"]
    rules = graph.of_type("aws:cloudwatch/eventRule:EventRule")
    patterns = sorted((json.loads(r.inputs["eventPattern"]) for r in rules), key=json.dumps)
    assert patterns == sorted(CLOUDFORMATION_PATTERNS, key=json.dumps)
    targets = graph.of_type("aws:cloudwatch/eventTarget:EventTarget")
    rule_names = {r.outputs["name"] for r in rules}
    assert {t.inputs["rule"] for t in targets} == rule_names
    assert {t.inputs["arn"] for t in targets} == {queue.outputs["arn"]}
    policy_resource = graph.of_type("aws:sqs/queuePolicy:QueuePolicy")[0]
    assert policy_resource.inputs["queueUrl"] == queue.outputs["url"]
    policy = json.loads(policy_resource.inputs["policy"])
    send, deny = policy["Statement"]
    assert set(send["Principal"]["Service"]) == CLOUDFORMATION_SENDERS
    assert send["Action"] == "sqs:SendMessage"
    assert deny["Effect"] == "Deny"
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    # The name Karpenter's Helm chart takes as settings.interruptionQueue.
    assert graph.outputs_of(graph.named("gpu"))["interruption_queue_name"] == queue.outputs["name"]


def test_the_controller_may_read_the_queue_and_pass_only_the_node_role(default_pool):
    graph, _ = default_pool
    grant = graph.named("gpu-controller")
    assert grant.inputs["role"] == "KarpenterController-ml-prod"
    queue_actions, pass_role = json.loads(grant.inputs["policy"])["Statement"]
    assert queue_actions["Action"] == ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"]
    assert queue_actions["Resource"] == graph.named("gpu-interruption").outputs["arn"]
    assert pass_role["Resource"] == graph.named("gpu-node").outputs["arn"]
    assert pass_role["Condition"] == {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}}


def test_a_second_pool_on_the_cluster_shares_the_first_pool_s_queue(pool_run):
    graph, pool = pool_run(interruptionQueue=False)
    for token in ("aws:sqs/queue:Queue", "aws:cloudwatch/eventRule:EventRule"):
        assert graph.of_type(token) == []
    (pass_role,) = json.loads(graph.named("gpu-controller").inputs["policy"])["Statement"]
    assert pass_role["Action"] == "iam:PassRole"
    assert pool.interruption_queue_name is None


def test_helm_values_name_the_cluster_the_queue_and_the_service_account(pool_run):
    graph, _ = pool_run(karpenterNamespace="karpenter")
    values = graph.outputs_of(graph.named("gpu"))["helm_values"]
    assert values == {
        "settings": {
            "clusterName": "ml-prod",
            "interruptionQueue": graph.named("gpu-interruption").outputs["name"],
        },
        "serviceAccount": {"name": "karpenter"},
        "namespace": "karpenter",
    }


def test_iam_documents_pass_the_action_database_and_checkov_finds_nothing(default_pool):
    graph, _ = default_pool
    assert iam.check_graph(graph) == []
    # run_checkov(graph), its checkov the session's service (tests/_harness/checkov_service.py).
    result = checkov_service.scan(graph)
    assert result.resource_count == len(
        [r for r in graph.resources if r.custom and r.type.startswith("aws:")]
    )
    assert SkipList.load().triage(result.findings).failed == []
    # It did judge them: SQS encryption (CKV_AWS_27) passed on the queue.
    assert ("CKV_AWS_27", "gpu-interruption") in result.passed_checks


def test_gpu_quota_requests_what_the_nodepools_can_hold(run, pool_args, governance):
    def program():
        pool = aws.KarpenterGpuPool("gpu", pool_args)
        aws.GpuQuota(
            "quota",
            {"governance": governance, "region": "us-east-1", "headroomInstancesPerPool": 0},
            pools=[pool],
        )

    graph = run(program)
    requests = {
        r.inputs["quotaCode"]: r.inputs["value"]
        for r in graph.of_type("aws:servicequotas/serviceQuota:ServiceQuota")
    }
    # G and VT Spot (L-3819A6DF): the Spot NodePool's cpu limit, 64 vCPUs; On-Demand
    # (L-DB2E81BA): the fallback's, 16.
    assert requests == {"L-3819A6DF": 64, "L-DB2E81BA": 16}
