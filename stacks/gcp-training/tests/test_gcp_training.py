"""The GCP training example: a network, the buckets, a `mig` pool, a GKE cluster with a Spot
GPU node pool and a notebook preview offline in one region; the GPU quota covers all of
them; every rule it touches passes; bad config is one ConfigError before anything
registers."""

from pathlib import Path

import pytest

from aistack import engine, policy

PROJECT = Path(__file__).resolve().parents[1]
# The module on one pytest-xdist worker: its module-scoped preview of the stack runs once.
pytestmark = pytest.mark.xdist_group("stacks-gcp-training")
REGION = "europe-west4"


@pytest.fixture(scope="module")
def graph():
    return engine.run_project(PROJECT, stack="dev")


def _one(graph, token):
    (resource,) = graph.of_type(token)
    return resource


def test_both_schedulers_and_the_notebook_are_in_the_buckets_region(graph):
    buckets = {
        str(b.inputs["location"]).lower() for b in graph.of_type("gcp:storage/bucket:Bucket")
    }
    assert buckets == {REGION}
    group = _one(graph, "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager")
    assert group.inputs["region"] == REGION
    assert group.inputs["targetSize"] in (0, "0")  # VMs exist only while runs do
    template = _one(graph, "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate")
    assert template.inputs["scheduling"]["provisioningModel"] == "SPOT"
    cluster = _one(graph, "gcp:container/cluster:Cluster")
    assert cluster.inputs["location"] == REGION
    notebook = _one(graph, "gcp:workbench/instance:Instance")
    assert notebook.inputs["location"].startswith(f"{REGION}-")
    assert notebook.inputs["gceSetup"]["metadata"]["idle-timeout-seconds"] == "3600"


def test_the_mig_vms_and_the_gke_nodes_run_as_the_training_tier_s_account(graph):
    template = _one(graph, "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate")
    email = template.inputs["serviceAccount"]["email"]
    assert email == "vision-gke-nodes-4127ef@team-ml-prod.iam.gserviceaccount.com"
    gpu_pools = [
        p for p in graph.of_type("gcp:container/nodePool:NodePool")
        if (p.inputs.get("nodeConfig") or {}).get("guestAccelerators")
        or "g2-" in str((p.inputs.get("nodeConfig") or {}).get("machineType"))
    ]  # fmt: skip
    assert gpu_pools and all(p.inputs["nodeConfig"]["serviceAccount"] == email for p in gpu_pools)


def test_the_gpu_quota_is_sized_for_the_pool_the_gke_nodes_and_the_notebook(graph):
    # Checked, not filed: stacks/gcp files the project's one preference per quota and
    # dimensions (quotaMode: check); this stack records what it needs of them.
    assert graph.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference") == []
    (quota,) = graph.of_type("aistack:index:GcpGpuQuota")
    needed = {
        r["quota_id"]: r["requested_gpus"]
        for r in graph.registered_outputs[quota.urn]["requests"].values()
    }
    # 4 Spot VMs + 4 Spot nodes (+ one of headroom), and the notebook's on-demand L4.
    assert needed["PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"] >= 8
    assert needed["NVIDIA-L4-GPUS-per-project-region"] >= 1


def test_every_rule_passes_and_the_training_items_are_kept(graph, aistack_stack):
    failed = [
        (rule.id, finding.resource_name, finding.message)
        for rule in policy.all_rules()
        for finding in rule.evaluate(graph)
        if finding.status == "non-compliant"
    ]
    assert failed == []
    aistack_stack.kept(graph, "C1", "C2", "C3", "C4", "C5", "C6", "D1", "D2", "D3", "D4")
    aistack_stack.kept(graph, "T1", "T3", "T5", "T6", "S1")


def test_the_outputs_say_how_to_submit_a_run_and_open_the_notebook(graph):
    outputs = graph.stack_outputs
    assert (
        "gcloud compute instance-groups managed create-instance train-mig"
        in outputs["submitCommand"]
    )
    assert outputs["jupyterlab"].startswith("https://")
    assert outputs["kueueFlavors"][0]["capacity"] == "spot"


def test_bad_config_is_one_error_before_the_first_resource(aistack_stack):
    error = aistack_stack.config_error(
        PROJECT,
        {
            "gcp-training:trainingImage": "registry.example.com/vision:latest",
            "gcp-training:notebookIdleMinutes": 5,
            "gcp-training:gkeMaxNodes": 0,
        },
    )
    fields = {problem.field.split(".")[0] for problem in error.problems}
    assert fields == {"pool", "notebook", "gkePool"}, fields
