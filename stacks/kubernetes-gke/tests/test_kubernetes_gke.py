"""The GKE example stack: the cluster, its Spot GPU pool and the team's Kubernetes platform
in one program. Every Kubernetes object goes to the new cluster through its kubeconfig, the
queue is fed by the pool's own flavors, Kueue's objects wait for the operators stack, the
firewall admits the nodes by the account the cluster gives them, every rule passes, and bad
config is one ConfigError before anything is registered."""

import ast
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from aistack import engine, gcp, policy
from aistack.engine import runner
from aistack.errors import ConfigError

PROJECT = Path(__file__).resolve().parents[1]
# The module on one pytest-xdist worker: its module-scoped preview of the stack runs once.
pytestmark = pytest.mark.xdist_group("stacks-kubernetes-gke")
OPERATORS = PROJECT.parent / "kubernetes-operators"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"


def _with_config(tmp_path: Path, **changes) -> Path:
    shutil.copytree(PROJECT, tmp_path / "stack", ignore=shutil.ignore_patterns("tests"))
    stack_file = tmp_path / "stack" / "Pulumi.dev.yaml"
    document = yaml.safe_load(stack_file.read_text())
    document["config"].update({f"gke-training:{key}": value for key, value in changes.items()})
    stack_file.write_text(yaml.safe_dump(document))
    return tmp_path / "stack"


@pytest.fixture(scope="module")
def graph():
    return engine.run_project(PROJECT, stack="dev")


def test_every_kubernetes_object_goes_to_the_new_cluster(graph):
    (provider,) = graph.of_type("pulumi:providers:kubernetes")
    # The kubeconfig is the cluster's: its endpoint, signing in with gke-gcloud-auth-plugin.
    (cluster,) = graph.of_type("gcp:container/cluster:Cluster")
    kubeconfig = provider.inputs["kubeconfig"]
    assert f"server: https://{cluster.outputs['endpoint']}" in kubeconfig
    assert "command: gke-gcloud-auth-plugin" in kubeconfig
    objects = [r for r in graph.resources if r.type.startswith("kubernetes:") and r.custom]
    assert objects and {r.provider.rpartition("::")[0] for r in objects} == {provider.urn}


def test_the_queue_admits_at_most_the_pool_s_gpus_on_its_spot_nodes(graph):
    (cluster_queue,) = graph.of_type(CLUSTER_QUEUE)
    (group,) = cluster_queue.inputs["spec"]["resourceGroups"]
    (flavor,) = group["flavors"]
    assert flavor["name"] == "l4-spot-spot"
    gpu = next(r for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")
    assert int(gpu["nominalQuota"]) == 4  # 4 x g2-standard-8, one L4 each
    pool = graph.named("l4-spot-pool")
    (resource_flavor,) = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    node_labels = resource_flavor.inputs["spec"]["nodeLabels"]
    # The pool's own labels, plus the one GKE puts on Spot nodes itself.
    assert (
        pool.inputs["nodeConfig"]["labels"].items()
        >= {
            "aistack.dev/pool": "l4-spot",
            "aistack.dev/capacity": "spot",
        }.items()
    )
    assert node_labels == {
        "aistack.dev/pool": "l4-spot",
        "aistack.dev/capacity": "spot",
        "cloud.google.com/gke-spot": "true",
    }


def test_the_flavors_validated_up_front_are_the_ones_the_pool_gives(graph):
    # planned_flavors() stands in for pool.kueue_flavors() before the pool exists: they
    # must agree, or the queue was validated against something else.
    given = graph.stack_outputs["kueueFlavors"]
    tree = ast.parse((PROJECT / "__main__.py").read_text())
    function = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "planned_flavors"
    )
    namespace = {"Any": Any, "gcp": gcp, "POOL": "l4-spot"}
    exec(compile(ast.Module([function], []), "__main__.py", "exec"), namespace)
    parsed = gcp.GpuNodePoolArgs.parse(
        {
            "governance": {"owner": "o", "costCenter": "c", "allowedRegions": ["europe-west4"]},
            "machineType": "g2-standard-8",
            "market": "spot",
            "maxNodes": 4,
        },
        where="pool",
    )
    assert namespace["planned_flavors"](parsed) == given


def test_kueue_s_objects_wait_for_the_operators_stack(tmp_path):
    first = engine.run_project(_with_config(tmp_path, operatorsInstalled=False), stack="dev")
    kinds = {r.type for r in first.resources}
    assert not any("kueue.x-k8s.io" in kind for kind in kinds)
    assert "submitCommand" not in first.stack_outputs
    # The cloud half, the namespaces and the managed-Prometheus monitoring (GKE installs
    # its CRDs with the cluster) are there from the first run.
    assert "gcp:container/nodePool:NodePool" in kinds
    assert {"vision-train", "vision-serve"} == {
        r.outputs["metadata"]["name"] for r in first.of_type("kubernetes:core/v1:Namespace")
    }
    assert any(kind.startswith("kubernetes:monitoring.googleapis.com/") for kind in kinds)


def test_the_operators_stack_for_gke_reaches_this_cluster_s_control_plane(graph):
    (cluster,) = graph.of_type("gcp:container/cluster:Cluster")
    master = cluster.inputs["privateClusterConfig"]["masterIpv4CidrBlock"]
    operators = yaml.safe_load((OPERATORS / "Pulumi.gke.yaml").read_text())["config"]
    assert operators["k8s-operators:gke"] is True
    assert operators["k8s-operators:apiServer"] == {"cidrs": [master], "port": 443}


def test_the_firewall_admits_the_nodes_by_the_account_the_cluster_gives_them(graph):
    nodes = graph.named("train-nodes")
    pool = graph.named("l4-spot-pool")
    assert pool.inputs["nodeConfig"]["serviceAccount"] == nodes.outputs["email"]
    training = [
        r
        for r in graph.of_type("gcp:compute/firewall:Firewall")
        if r.inputs.get("targetServiceAccounts")
    ]
    assert training and all(
        r.inputs["targetServiceAccounts"] == [nodes.outputs["email"]] for r in training
    )


def test_the_trainer_reaches_its_data_as_its_own_google_account(graph):
    trainer = graph.named("identity-trainer")
    account = next(
        r
        for r in graph.of_type("kubernetes:core/v1:ServiceAccount")
        if r.outputs["metadata"]["name"] == "trainer"
    )
    annotations = account.outputs["metadata"]["annotations"]
    assert annotations["iam.gke.io/gcp-service-account"] == trainer.outputs["email"]
    grants = {
        (r.inputs["bucket"], r.inputs["role"])
        for r in graph.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
        if r.inputs["member"] == f"serviceAccount:{trainer.outputs['email']}"
    }
    assert grants == {
        ("team-ml-prod-datasets", "roles/storage.objectViewer"),
        ("team-ml-prod-checkpoints", "roles/storage.objectUser"),
    }


def test_every_rule_passes(graph):
    failed = [
        (rule.id, finding.resource_name, finding.message)
        for rule in policy.all_rules()
        for finding in rule.evaluate(graph)
        if finding.status == "non-compliant"
    ]
    assert failed == []


def test_the_checklist_items_of_both_halves_pass(graph, aistack_stack):
    aistack_stack.kept(graph, "C1", "C2", "C3", "C5", "C6", "S1", "T1", "T2", "T3", "T5")
    aistack_stack.kept(graph, "D3", "D4", "E1", "E3", "E4", "E5")


def test_the_model_is_served_on_its_own_on_demand_pool_and_reads_only_the_models_bucket(graph):
    pools = {
        p.inputs["nodeConfig"]["labels"]["aistack.dev/pool"]: p
        for p in graph.of_type("gcp:container/nodePool:NodePool")
    }
    assert not pools["l4-serve"].inputs["nodeConfig"].get("spot")
    deployments = [r for r in graph.resources if r.type == "kubernetes:apps/v1:Deployment"]
    assert {
        d.inputs["spec"]["template"]["spec"]["nodeSelector"]["aistack.dev/pool"]
        for d in deployments
    } == {"l4-serve"}
    grants = {
        (g.inputs["bucket"], g.inputs["role"])
        for g in graph.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
        if "server" in str(g.inputs["member"])
    }
    assert grants == {("team-ml-prod-models", "roles/storage.objectViewer")}
    assert graph.of_type(
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
    )


def test_bad_config_is_one_error_before_the_first_resource(tmp_path, monkeypatch):
    stack = _with_config(
        tmp_path,
        maxNodes=0,
        trainingImage="registry.example.com/vision:latest",
        servingGpus=-1,
    )
    registered = []
    register = runner.RecordingMonitor.RegisterResource

    def counting(self, request):
        if not request.type.startswith(("pulumi:providers:", "pulumi:pulumi:")):
            registered.append(request.name)
        return register(self, request)

    monkeypatch.setattr(runner.RecordingMonitor, "RegisterResource", counting)
    with pytest.raises(ConfigError) as caught:
        engine.run_project(stack, stack="dev")
    fields = {problem.field.split(".")[0] for problem in caught.value.problems}
    # servingGpus sizes the serving namespace, its node pool and the replicas' cap.
    assert fields == {"pool", "job", "serve", "servingPool", "inference"}, fields
    assert registered == []


def test_the_metrics_adapter_the_operators_stack_runs_has_its_identity_here(graph):
    """The serving HPAs read custom.metrics.k8s.io, which the operators stack's Custom
    Metrics Stackdriver Adapter serves as this Google account: it must be the one this
    stack makes, bound to the adapter's ServiceAccount, with monitoring.viewer."""
    import yaml

    operators = yaml.safe_load(
        (PROJECT.parent / "kubernetes-operators/Pulumi.gke.yaml").read_text()
    )
    adapter = operators["config"]["k8s-operators:customMetricsAdapter"]
    assert graph.stack_outputs["metricsAdapterServiceAccount"] == adapter["gcpServiceAccount"]
    members = {
        r.inputs.get("role"): r.inputs.get("member")
        for r in graph.resources
        if r.type == "gcp:projects/iAMMember:IAMMember"
    }
    assert members["roles/monitoring.viewer"] == f"serviceAccount:{adapter['gcpServiceAccount']}"
    ksa = (
        "serviceAccount:team-ml-prod.svc.id.goog[custom-metrics/custom-metrics-stackdriver-adapter]"
    )
    assert any(
        r.inputs.get("role") == "roles/iam.workloadIdentityUser" and r.inputs.get("member") == ksa
        for r in graph.resources
        if r.type == "gcp:serviceaccount/iAMMember:IAMMember"
    )


def test_the_budget_kill_switch_reaches_the_training_pool_only(graph):
    """The kill switch scales node pools labelled aistack-workload=training to zero
    (aistack/gcp/functions/budget_guard/main.py): never the system pool, which runs the
    operators and the cluster's own pods, nor the serving pool, whose replicas would go."""
    # The function's WORKLOAD_LABEL; read from the config, not by importing the function,
    # whose google-cloud libraries cannot share a process with Pulumi's (tests/gcp/functions).
    from aistack.config import WORKLOAD_TAG, gcp_label

    workload_label = gcp_label(WORKLOAD_TAG)
    source = (PROJECT.parents[1] / "aistack/gcp/functions/budget_guard/main.py").read_text()
    assert f'WORKLOAD_LABEL = "{workload_label}"' in source
    labelled = {
        pool.name: (pool.inputs.get("nodeConfig") or {}).get("resourceLabels", {})
        for pool in graph.of_type("gcp:container/nodePool:NodePool")
    }
    reached = {
        name for name, labels in labelled.items() if labels.get(workload_label) == "training"
    }
    assert reached == {"l4-spot-pool"}, labelled


def test_the_private_control_plane_reaches_every_webhook_and_aggregated_api_port(graph):
    """GKE's own rule lets a private control plane reach the nodes on 443 and 10250 only,
    and the API server calls webhooks and aggregated APIs at their pods' ports (k8s
    fidelity audit 2, defect 1). Every such port the operators stack serves on GKE must be
    open from the control plane's range, to the nodes' account."""
    from aistack.queries.k8s import builtin_manifests

    operators = engine.run_project(PROJECT.parent / "kubernetes-operators", stack="gke")
    served = set()
    for _, document in builtin_manifests(operators):
        if document["kind"] in ("APIService", "Service"):
            for port in (document.get("spec") or {}).get("ports") or []:
                if isinstance(port.get("targetPort"), int):
                    served.add(port["targetPort"])
    # Kueue's and JobSet's webhook and visibility Services come with their charts.
    served |= {9443, 8082}
    opened = set()
    for rule in graph.of_type("gcp:compute/firewall:Firewall"):
        if rule.inputs.get("direction") == "INGRESS" and "172.16.0.0/28" in (
            rule.inputs.get("sourceRanges") or []
        ):
            for allow in rule.inputs.get("allows") or []:
                opened |= {int(port) for port in allow.get("ports") or []}
    assert served - {443, 10250} <= opened, (served, opened)
