"""The operators stack: each chart is the release whose CRDs aistack keeps (so the two cannot
drift apart), pinned exactly; GKE gets only what GKE does not manage, EKS gets Karpenter with
the pool's values; every operator namespace is quota'd at 0 GPUs, default-deny and Pod
Security restricted but the DCGM exporter's; bad config is one error before any resource."""

import ast
import re
import shutil
from pathlib import Path

import pytest
import yaml

from aistack import engine, policy
from aistack.errors import ConfigError
from aistack.k8s.gpu_monitoring import EXPORTERS, PINNED
from aistack.k8s.training_queue import KUEUE_VERSION

PROJECT = Path(__file__).resolve().parents[1]
# The module on one pytest-xdist worker: its module-scoped preview of the stack runs once.
pytestmark = pytest.mark.xdist_group("stacks-kubernetes-operators")
CRDS = Path(__file__).resolve().parents[3] / "aistack" / "scan" / "data" / "crds"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _charts() -> dict:
    """The stack's CHARTS table, read from its source (a program is not importable)."""
    tree = ast.parse((PROJECT / "__main__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "CHARTS":
            return ast.literal_eval(node.value)
    raise AssertionError("CHARTS not found in __main__.py")


CHARTS = _charts()
#: The CRD releases aistack keeps: directory `<project>-<release>` -> {project: {releases}}.
KEPT: dict[str, set[str]] = {}
for directory in CRDS.iterdir():
    if directory.is_dir():
        project, _, release = directory.name.rpartition("-")
        KEPT.setdefault(project, set()).add(release)


@pytest.fixture(scope="module")
def graphs():
    return {stack: engine.run_project(PROJECT, stack=stack) for stack in ("dev", "gke", "eks")}


def _releases(graph) -> dict:
    return {r.name: r for r in graph.of_type(RELEASE)}


@pytest.mark.parametrize("key", sorted(k for k, v in CHARTS.items() if v["crds"]))
def test_each_operator_is_the_release_whose_crds_aistack_keeps(key):
    spec = CHARTS[key]
    project = spec["crds"]
    if project not in KEPT:
        # KEDA's and the Gateway API's CRDs are being added (issue 15); until they land
        # there is nothing to drift from.
        pytest.skip(f"no {project} CRDs kept under aistack/scan/data/crds yet")
    assert KEPT[project] == {spec["release"]}, (
        f"{key} installs {spec['release']} but aistack validates against {KEPT[project]}: "
        "upgrade the chart and the CRD directory together"
    )


def test_the_components_are_written_against_the_releases_installed():
    assert CHARTS["kueue"]["release"] == KUEUE_VERSION
    assert CHARTS["kube-prometheus-stack"]["release"] == PINNED["prometheus-operator"]
    assert CHARTS["dcgm-exporter"]["version"] == PINNED["dcgm-exporter-chart"]
    # k8s.GpuMonitoring scrapes the exporter in the namespace it expects the chart in.
    assert CHARTS["dcgm-exporter"]["namespace"] == EXPORTERS["dcgm-exporter-chart"].namespace


def test_every_chart_is_pinned_exactly_and_rolls_back_when_it_fails(graphs):
    for graph in graphs.values():
        for name, release in _releases(graph).items():
            inputs = release.inputs
            assert inputs["version"] == CHARTS[name]["version"]
            assert re.fullmatch(r"\d+\.\d+\.\d+", inputs["version"]), name  # not a range
            assert inputs["atomic"] is True and inputs["cleanupOnFail"] is True
            assert release.outputs["status"]["status"] == "deployed"
            # Its own namespace, never default.
            assert release.outputs["namespace"] == CHARTS[name]["namespace"]
            if not CHARTS[name]["chart"].startswith("oci://"):
                assert inputs["repositoryOpts"] == {"repo": CHARTS[name]["repo"]}


def test_any_cluster_gets_every_operator_but_karpenter(graphs):
    assert set(_releases(graphs["dev"])) == {
        "kueue",
        "jobset",
        "keda",
        "prometheus-operator-crds",
        "kube-prometheus-stack",
        "dcgm-exporter",
        "nvidia-device-plugin",
    }
    (gateway,) = graphs["dev"].of_type("kubernetes:yaml/v2:ConfigFile")
    assert gateway.inputs["file"].endswith("/v1.6.1/standard-install.yaml")
    assert graphs["dev"].stack_outputs["installed"]["gateway-api"] == "v1.6.1"


def test_crds_helm_would_never_upgrade_come_from_a_chart_of_their_own(graphs):
    # Helm installs a chart's crds/ directory once and never upgrades it (Helm docs, CRD
    # best practices): kube-prometheus-stack's CRDs come from prometheus-operator-crds.
    releases = _releases(graphs["dev"])
    stack, crds = releases["kube-prometheus-stack"], releases["prometheus-operator-crds"]
    assert stack.inputs["values"]["crds"] == {"enabled": False}
    assert crds.urn in stack.dependencies
    assert (
        CHARTS["prometheus-operator-crds"]["release"] == CHARTS["kube-prometheus-stack"]["release"]
    )


def test_gke_installs_only_what_gke_does_not_manage(graphs):
    graph = graphs["gke"]
    assert set(_releases(graph)) == {"kueue", "jobset", "keda"}
    assert graph.of_type("kubernetes:yaml/v2:ConfigFile") == []


def test_eks_adds_karpenter_in_kube_system_with_the_pool_s_values(graphs):
    karpenter = _releases(graphs["eks"])["karpenter"]
    assert karpenter.outputs["namespace"] == "kube-system"
    values = karpenter.inputs["values"]
    assert values["settings"] == {
        "clusterName": "ml-prod",
        "interruptionQueue": "gpu-interruption-e612693",
    }
    assert values["serviceAccount"] == {"name": "karpenter"}
    # Its CRDs are karpenter-crd's release, installed first, so upgrades upgrade them.
    crd = _releases(graphs["eks"])["karpenter-crd"]
    assert karpenter.inputs["skipCrds"] is True and crd.urn in karpenter.dependencies
    # The stack does not create, relabel or fence a namespace Kubernetes owns.
    namespaces = {
        r.outputs["metadata"]["name"] for r in graphs["eks"].of_type("kubernetes:core/v1:Namespace")
    }
    assert "kube-system" not in namespaces


def test_the_eks_values_are_what_the_eks_stack_s_pool_gives():
    eks = engine.run_project(PROJECT.parent / "kubernetes-eks", stack="dev")
    stack_file = yaml.safe_load((PROJECT / "Pulumi.eks.yaml").read_text())
    assert (
        stack_file["config"]["k8s-operators:karpenter"] == eks.stack_outputs["karpenterHelmValues"]
    )


def test_operator_namespaces_hold_no_gpus_deny_by_default_and_are_restricted(graphs):
    graph = graphs["dev"]
    levels = {
        r.outputs["metadata"]["name"]: r.outputs["metadata"]["labels"][
            "pod-security.kubernetes.io/enforce"
        ]
        for r in graph.of_type("kubernetes:core/v1:Namespace")
    }
    assert levels == {
        "kueue-system": "restricted",
        "jobset-system": "restricted",
        "keda": "restricted",
        "monitoring": "restricted",
        # root, SYS_ADMIN and a hostPath: the one privileged namespace, with its reason.
        "dcgm-exporter": "privileged",
    }
    quotas = {
        q.outputs["metadata"]["namespace"]: q.inputs["spec"]["hard"]
        for q in graph.of_type("kubernetes:core/v1:ResourceQuota")
    }
    assert set(quotas) == set(levels)
    assert all(
        hard == {"requests.nvidia.com/gpu": "0", "services.loadbalancers": "0"}
        for hard in quotas.values()
    )
    keda_allow = next(
        p
        for p in graph.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if p.outputs["metadata"]["namespace"] == "keda"
        and p.outputs["metadata"]["name"] == "operator"
    )
    egress = keda_allow.inputs["spec"]["egress"]
    # Prometheus, for the prometheus scaler: the monitoring namespace on 9090 only.
    assert {
        "to": [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
        ],
        "ports": [{"protocol": "TCP", "port": 9090}],
    } in egress
    assert {
        "to": [{"ipBlock": {"cidr": "10.0.0.0/28"}}],
        "ports": [{"protocol": "TCP", "port": 6443}],
    } in egress


def test_every_rule_passes_the_dcgm_exporter_s_namespace_privileged_by_declaration(graphs):
    failed = {
        stack: sorted(
            (rule.id, finding.resource_name)
            for rule in policy.all_rules()
            for finding in rule.evaluate(graph)
            if finding.status == "non-compliant"
        )
        for stack, graph in graphs.items()
    }
    assert failed == {"dev": [], "gke": [], "eks": []}
    pod_security = next(r for r in policy.all_rules() if r.id == "AIS-S1-04")
    verdicts = {f.resource_name: f for f in pod_security.evaluate(graphs["dev"])}
    assert "by declaration" in verdicts["dcgm-exporter-namespace"].message


def test_bad_config_is_one_error_before_the_first_resource(aistack_stack):
    error = aistack_stack.config_error(
        PROJECT,
        {
            "k8s-operators:gke": True,
            "k8s-operators:eks": True,
            "k8s-operators:apiServer": {"cidrs": [], "port": 0},
        },
    )
    fields = {problem.field for problem in error.problems}
    assert {"operators.apiServer.cidrs", "operators.apiServer.port"} <= fields, fields


#: The values paths the stack sets, as each chart's values.yaml at the pinned tag has them
#: (read from the upstream files: kubernetes-sigs/kueue v0.19.2 charts/kueue, kubernetes-
#: sigs/jobset v0.12.0 charts/jobset, kedacore/charts v2.20.2 keda, prometheus-community/
#: helm-charts kube-prometheus-stack-88.3.0, NVIDIA/dcgm-exporter 4.5.3-4.8.2 deployment,
#: aws/karpenter-provider-aws v1.14.1 charts/karpenter). `key`: the chart has it; `map`: a
#: free-form mapping whose default is `{}` (resources, affinity), so anything below is the
#: stack's. Helm takes a misspelt key without a word (only a chart with values.schema.json
#: refuses one, and none of these has one), so a value that is not here did nothing.
CHART_VALUES = {
    "dcgm-exporter": {"affinity": "map", "serviceMonitor.enabled": "key", "tolerations": "key"},
    "jobset": {"prometheus.enable": "key"},
    "karpenter": {
        "controller.resources": "map",
        "serviceAccount.name": "key",
        "settings.clusterName": "key",
        "settings.interruptionQueue": "key",
    },
    "keda": {"image.pullPolicy": "key", "rbac.enabledCustomScaledRefKinds": "key"},
    "kube-prometheus-stack": {
        "alertmanager.alertmanagerSpec.resources": "map",
        "crds.enabled": "key",
        "grafana.enabled": "key",
        "kubeControllerManager.enabled": "key",
        "kubeEtcd.enabled": "key",
        "kubeProxy.enabled": "key",
        "kubeScheduler.enabled": "key",
        "nodeExporter.enabled": "key",
        "prometheus.prometheusSpec.resources": "map",
        "prometheus.prometheusSpec.retention": "key",
        "prometheusOperator.resources": "map",
    },
    "kueue": {"enableKueueViz": "key", "enablePrometheus": "key"},
    # NVIDIA/k8s-device-plugin v0.20.0 deployments/helm/nvidia-device-plugin/values.yaml:
    # a list, which Helm replaces whole.
    "nvidia-device-plugin": {
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms": "key"
    },
    "prometheus-operator-crds": {},
    "karpenter-crd": {},
}


def _leaves(values: dict, prefix: str = ""):
    for key, value in values.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and value:
            yield from _leaves(value, path)
        else:
            yield path


def test_every_value_the_stack_sets_is_one_its_chart_has(graphs):
    unknown = []
    for graph in graphs.values():
        for name, release in _releases(graph).items():
            known = CHART_VALUES[name]
            maps = [path for path, kind in known.items() if kind == "map"]
            for leaf in _leaves(release.inputs.get("values") or {}):
                if leaf not in known and not any(leaf.startswith(f"{m}.") for m in maps):
                    unknown.append((name, leaf))
    assert unknown == []


def test_gke_and_eks_at_once_and_an_unknown_operator_are_one_error(tmp_path):
    shutil.copytree(PROJECT, tmp_path / "stack", ignore=shutil.ignore_patterns("tests"))
    stack_file = tmp_path / "stack" / "Pulumi.eks.yaml"
    document = yaml.safe_load(stack_file.read_text())
    document["config"]["k8s-operators:gke"] = True
    document["config"]["k8s-operators:skip"] = ["kueu"]
    stack_file.write_text(yaml.safe_dump(document))
    with pytest.raises(ConfigError, match="gke and eks are both true") as caught:
        engine.run_project(tmp_path / "stack", stack="eks")
    assert "unknown operators ['kueu']" in str(caught.value)
