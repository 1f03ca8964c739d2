"""Karpenter rules (C3 limits, C5 consolidation, C6 IMDSv2, D3 RAID0, E1 pinned GPU AMI, T1
interruption queue):
aws.KarpenterGpuPool complies; hand-written NodePools and EC2NodeClasses without the
safeguard violate. The hand-written objects validate against the kept v1.14.1 CRDs, so
the violations are ones the API server would accept."""

from __future__ import annotations

import copy

import pulumi_kubernetes as k8s
import pytest

from aistack import aws
from aistack.queries.k8s import custom_manifests
from aistack.scan.crd_schemas import validate_custom_resource
from tests._harness.shared_graphs import shared
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-k8s-karpenter_rules")

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["us-east-1"]}

POOL = {
    "governance": GOVERNANCE,
    "region": "us-east-1",
    "clusterName": "ml",
    "controllerRoleName": "KarpenterController-ml",
    "instanceTypes": ["g5.xlarge"],
    "maxSpotGpus": 4,
    "maxOnDemandGpus": 1,
    "amiAlias": "al2023@v20260714",
    "subnetSelectorTags": {"karpenter.sh/discovery": "ml"},
    "securityGroupSelectorTags": {"karpenter.sh/discovery": "ml"},
}

NODE_CLASS_SPEC = {
    "role": "KarpenterNodeRole-ml",
    "amiSelectorTerms": [{"alias": "al2023@v20260714"}],
    "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "ml"}}],
    "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "ml"}}],
    "instanceStorePolicy": "RAID0",
}

NODE_POOL_SPEC = {
    "template": {
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "raw"},
            "requirements": [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": ["g5.xlarge"],
                },
            ],
            "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
        }
    },
    "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "300s"},
    "limits": {"cpu": "64", "nvidia.com/gpu": "4"},
}


def _pool():
    aws.KarpenterGpuPool("gpu", POOL)


def _raw(pool_changes=None, class_changes=None, drop=(), plain_class=None):
    """A hand-written EC2NodeClass `raw` and NodePool `raw` (a GPU pool), changed;
    `plain_class` replaces the class's spec whole."""
    pool_spec = copy.deepcopy(NODE_POOL_SPEC)
    class_spec = copy.deepcopy(plain_class or NODE_CLASS_SPEC)
    pool_spec.update(pool_changes or {})
    class_spec.update(class_changes or {})
    for path in drop:
        target = pool_spec
        *parents, last = path
        for key in parents:
            target = target[key]
        del target[last]

    def program():
        k8s.apiextensions.CustomResource(
            "raw-class",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": "raw"},
            spec=class_spec,
        )
        k8s.apiextensions.CustomResource(
            "raw-pool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": "raw"},
            spec=pool_spec,
        )

    return program


@pytest.fixture
def raw_verdicts():
    """verdicts(), after checking the hand-written objects are valid for the CRDs: one build
    of the program (what verdicts() runs) serves both."""

    def _raw_verdicts(rule_id, program):
        graph = build(program)
        for _, manifest in custom_manifests(graph):
            assert validate_custom_resource(manifest) == [], manifest
        return verdicts_of(rule_id, graph)

    return _raw_verdicts


@pytest.fixture(scope="module")
def pool_graph():
    """The component's pool, built once for the module's compliant cases."""
    with shared(build(_pool)) as graph:
        yield graph


# ---- compliant: the component ---------------------------------------------------------------


@pytest.mark.parametrize(
    "rule_id, resources",
    [
        ("AIS-C3-10", {"gpu-spot", "gpu-on-demand"}),
        ("AIS-C5-06", {"gpu-spot", "gpu-on-demand"}),
        ("AIS-D3-03", {"gpu-spot", "gpu-on-demand"}),
        ("AIS-T1-03", {"gpu-spot"}),  # the on-demand pool runs no Spot
        ("AIS-C6-12", {"gpu-node-class"}),
        ("AIS-E1-08", {"gpu-node-class"}),
    ],
)
def test_a_karpenter_gpu_pool_complies(pool_graph, rule_id, resources):
    assert verdicts_of(rule_id, pool_graph) == dict.fromkeys(resources, "compliant")


def test_the_hand_written_baseline_complies_but_t1(raw_verdicts):
    for rule_id in ("AIS-C3-10", "AIS-C5-06", "AIS-D3-03"):
        assert raw_verdicts(rule_id, _raw()) == {"raw-pool": "compliant"}, rule_id
    for rule_id in ("AIS-C6-12", "AIS-E1-08"):
        assert raw_verdicts(rule_id, _raw()) == {"raw-class": "compliant"}, rule_id


# ---- violating: hand-written objects --------------------------------------------------------


@pytest.mark.parametrize(
    "limits", [None, {"cpu": "64"}, {"nvidia.com/gpu": "4"}, {"memory": "1000Gi"}]
)
def test_c3_10_a_gpu_nodepool_without_cpu_and_gpu_limits_fails(raw_verdicts, limits):
    program = _raw(drop=[("limits",)]) if limits is None else _raw({"limits": limits})
    assert raw_verdicts("AIS-C3-10", program) == {"raw-pool": "non-compliant"}


def test_c5_06_a_gpu_nodepool_that_never_consolidates_fails(raw_verdicts):
    program = _raw(
        {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"}}
    )
    assert raw_verdicts("AIS-C5-06", program) == {"raw-pool": "non-compliant"}


def test_c5_06_a_static_gpu_nodepool_fails(raw_verdicts):
    program = _raw({"replicas": 2, "limits": {"nodes": "2"}})
    assert raw_verdicts("AIS-C5-06", program) == {"raw-pool": "non-compliant"}


def test_c5_06_the_crd_default_disruption_consolidates(raw_verdicts):
    # No disruption block: the API server defaults consolidateAfter to 0s.
    assert raw_verdicts("AIS-C5-06", _raw(drop=[("disruption",)])) == {"raw-pool": "compliant"}


@pytest.mark.parametrize(
    "options",
    [
        {"httpTokens": "optional"},
        {"httpPutResponseHopLimit": 2},
        {"httpTokens": "required", "httpPutResponseHopLimit": 3},
    ],
)
def test_c6_12_an_ec2nodeclass_without_imdsv2_one_hop_fails(raw_verdicts, options):
    program = _raw(class_changes={"metadataOptions": options})
    assert raw_verdicts("AIS-C6-12", program) == {"raw-class": "non-compliant"}


def test_d3_03_a_gpu_nodepool_whose_node_class_ignores_nvme_fails(raw_verdicts):
    spec = {k: v for k, v in NODE_CLASS_SPEC.items() if k != "instanceStorePolicy"}
    assert raw_verdicts("AIS-D3-03", _raw(class_changes=None, plain_class=spec)) == {
        "raw-pool": "non-compliant"
    }


# Platform fact: awslabs/amazon-eks-ami CHANGELOG.md, the first section listing AMI type
# AL2023_x86_64_NVIDIA is "# AMI Release v20240924" (aistack/catalog/eks_amis.py).
@pytest.mark.parametrize(
    "alias", ["al2023@latest", "bottlerocket@latest", "al2023@v20240807", "al2023@v20240917"]
)
def test_e1_08_a_gpu_nodepools_class_unpinned_or_without_nvidia_images_fails(raw_verdicts, alias):
    program = _raw(class_changes={"amiSelectorTerms": [{"alias": alias}]})
    assert raw_verdicts("AIS-E1-08", program) == {"raw-class": "non-compliant"}


def test_e1_08_an_alias_that_is_no_release_fails(raw_verdicts):
    program = _raw(class_changes={"amiSelectorTerms": [{"alias": "al2023@v2024"}]})
    assert raw_verdicts("AIS-E1-08", program) == {"raw-class": "non-compliant"}


def _class_only(alias):
    def program():
        k8s.apiextensions.CustomResource(
            "raw-class",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": "raw"},
            spec={**NODE_CLASS_SPEC, "amiSelectorTerms": [{"alias": alias}]},
        )

    return program


def test_e1_08_an_old_alias_on_a_class_no_nodepool_of_the_stack_names_fails(raw_verdicts):
    # Its NodePools are elsewhere: judged as the GPU class it may well be.
    assert raw_verdicts("AIS-E1-08", _class_only("al2023@v20240807")) == {
        "raw-class": "non-compliant"
    }
    assert raw_verdicts("AIS-E1-08", _class_only("al2023@v20240924")) == {"raw-class": "compliant"}


def test_e1_08_an_old_alias_only_cpu_nodepools_use_complies(raw_verdicts):
    template = copy.deepcopy(NODE_POOL_SPEC["template"])
    template["spec"]["requirements"][1]["values"] = ["m7i.xlarge"]
    del template["spec"]["taints"]
    program = _raw(
        {"template": template, "limits": {"cpu": "64"}},
        class_changes={"amiSelectorTerms": [{"alias": "al2023@v20240807"}]},
    )
    assert raw_verdicts("AIS-E1-08", program) == {"raw-class": "compliant"}


def test_t1_03_a_spot_nodepool_without_an_interruption_queue_fails(raw_verdicts):
    assert raw_verdicts("AIS-T1-03", _raw()) == {"raw-pool": "non-compliant"}


def test_t1_03_a_nodepool_without_a_capacity_requirement_may_run_spot(raw_verdicts):
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.xlarge"]}
    ]
    template = copy.deepcopy(NODE_POOL_SPEC["template"])
    template["spec"]["requirements"] = requirements
    assert raw_verdicts("AIS-T1-03", _raw({"template": template})) == {"raw-pool": "non-compliant"}


def test_t1_03_an_on_demand_nodepool_needs_no_queue(raw_verdicts):
    template = copy.deepcopy(NODE_POOL_SPEC["template"])
    template["spec"]["requirements"][0]["values"] = ["on-demand"]
    assert raw_verdicts("AIS-T1-03", _raw({"template": template})) == {"": "not-applicable"}
