"""Kubernetes GPU monitoring rules: C5 (an idle-GPU alert over every GPU namespace, alerts
fed by a DCGM scrape) and T3 (a starvation alert), compliant with k8s.TeamNamespace and
k8s.GpuMonitoring, violated by a namespace left unwatched or alerts evaluated on nothing."""

import pulumi_kubernetes as k8s
import pytest

from aistack import k8s as aistack_k8s
from tests.k8s.conftest import spot_flavor

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}


def _team(gpus=4):
    return aistack_k8s.TeamNamespace(
        "ml-train", {"team": "ml", "gpus": gpus, "governance": GOVERNANCE}
    )


def _monitoring(**args):
    aistack_k8s.GpuMonitoring(
        "gpu", {"platform": "prometheus-operator", "governance": GOVERNANCE, **args}
    )


def _prometheus_rule(expr, name="hand"):
    k8s.apiextensions.CustomResource(
        name,
        api_version="monitoring.coreos.com/v1",
        kind="PrometheusRule",
        metadata={"name": name, "namespace": "monitoring"},
        spec={"groups": [{"name": "g", "rules": [{"alert": "GpuAlert", "expr": expr}]}]},
    )


def _service_monitor(honor_labels=False):
    k8s.apiextensions.CustomResource(
        "dcgm",
        api_version="monitoring.coreos.com/v1",
        kind="ServiceMonitor",
        metadata={"name": "dcgm", "namespace": "gpu-operator"},
        spec={
            "selector": {"matchLabels": {"app": "nvidia-dcgm-exporter"}},
            "endpoints": [{"port": "gpu-metrics", "honorLabels": honor_labels}],
        },
    )


IDLE = 'max_over_time(DCGM_FI_DEV_GPU_UTIL{exported_pod!=""}[30m]) < 1'
STARVED = 'avg by (exported_pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{exported_pod!=""}[30m])) < 40'


# ---- C5: idle GPU alert ----------------------------------------------------------------


@pytest.mark.parametrize("platform", ["prometheus-operator", "gke-managed-prometheus"])
def test_c5_04_a_gpu_namespace_watched_by_gpu_monitoring_complies(verdicts, platform):
    def program():
        _team()
        _monitoring(platform=platform)

    assert verdicts("AIS-C5-04", program) == {"ml-train-namespace": "compliant"}


def test_c5_04_a_gpu_namespace_without_an_idle_alert_fails(verdicts):
    assert verdicts("AIS-C5-04", _team) == {"ml-train-namespace": "non-compliant"}


def test_c5_04_an_idle_alert_scoped_to_other_namespaces_does_not_count(verdicts):
    def program():
        _team()
        _monitoring(namespaces=["cv-train"])

    assert verdicts("AIS-C5-04", program) == {"ml-train-namespace": "non-compliant"}


def test_c5_04_disabling_the_idle_alert_fails(verdicts):
    def program():
        _team()
        _monitoring(idle={"enabled": False})

    assert verdicts("AIS-C5-04", program) == {"ml-train-namespace": "non-compliant"}


@pytest.mark.parametrize(
    ("expr", "status"),
    [
        (IDLE, "compliant"),
        ('max_over_time(DCGM_FI_DEV_GPU_UTIL{namespace=~"ml-.*"}[30m]) < 1', "compliant"),
        ('max_over_time(DCGM_FI_DEV_GPU_UTIL{namespace!="ml-train"}[30m]) < 1', "non-compliant"),
        ('max_over_time(DCGM_FI_DEV_GPU_UTIL{exported_namespace="cv"}[30m]) < 1', "non-compliant"),
        # A "GPU hot" alert is not an idle alert.
        ("max_over_time(DCGM_FI_DEV_GPU_UTIL[30m]) > 95", "non-compliant"),
    ],
)
def test_c5_04_a_hand_written_rule_counts_when_it_watches_the_namespace(verdicts, expr, status):
    def program():
        _team()
        _prometheus_rule(expr)

    assert verdicts("AIS-C5-04", program) == {"ml-train-namespace": status}


def test_c5_04_a_namespace_without_gpus_needs_no_idle_alert(verdicts):
    assert verdicts("AIS-C5-04", lambda: _team(gpus=0)) == {"": "not-applicable"}


# ---- T3: starvation alert --------------------------------------------------------------


def test_t3_02_a_gpu_namespace_watched_by_gpu_monitoring_complies(verdicts):
    def program():
        _team()
        _monitoring()

    assert verdicts("AIS-T3-02", program) == {"ml-train-namespace": "compliant"}


def test_t3_02_a_gpu_namespace_without_a_starvation_alert_fails(verdicts):
    def program():
        _team()
        _monitoring(starvation={"enabled": False})

    assert verdicts("AIS-T3-02", program) == {"ml-train-namespace": "non-compliant"}


def test_t3_02_an_idle_alert_is_not_a_starvation_alert(verdicts):
    def program():
        _team()
        _prometheus_rule(IDLE)

    assert verdicts("AIS-T3-02", program) == {"ml-train-namespace": "non-compliant"}


def test_t3_02_a_hand_written_starvation_rule_counts(verdicts):
    def program():
        _team()
        _prometheus_rule(STARVED)

    assert verdicts("AIS-T3-02", program) == {"ml-train-namespace": "compliant"}


# ---- C5: alerts fed by a scrape ----------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"scrape": False},  # the installer's ServiceMonitor scrapes: declared
        {"platform": "gke-managed-prometheus"},
        {"platform": "gke-managed-prometheus", "exporter": "gke-managed-dcgm"},
    ],
)
def test_c5_05_gpu_monitoring_alerts_are_fed(verdicts, args):
    assert verdicts("AIS-C5-05", lambda: _monitoring(**args)) == {"gpu-rules": "compliant"}


def test_c5_05_gpu_alerts_with_no_scrape_fail(verdicts):
    assert verdicts("AIS-C5-05", lambda: _prometheus_rule(IDLE)) == {"hand": "non-compliant"}


def test_c5_05_a_scrape_for_the_other_monitoring_stack_does_not_feed_them(verdicts):
    def program():
        _prometheus_rule(IDLE)
        k8s.apiextensions.CustomResource(
            "gmp",
            api_version="monitoring.googleapis.com/v1",
            kind="PodMonitoring",
            metadata={"name": "gmp", "namespace": "gpu-operator"},
            spec={
                "selector": {"matchLabels": {"app": "nvidia-dcgm-exporter"}},
                "endpoints": [{"port": "metrics", "interval": "15s"}],
            },
        )

    assert verdicts("AIS-C5-05", program) == {"hand": "non-compliant"}


@pytest.mark.parametrize(
    ("honor_labels", "status"), [(False, "compliant"), (True, "non-compliant")]
)
def test_c5_05_honor_labels_hides_the_exported_labels_the_alerts_select(
    verdicts, honor_labels, status
):
    def program():
        _prometheus_rule(IDLE)
        _service_monitor(honor_labels)

    assert verdicts("AIS-C5-05", program) == {"hand": status}


# ---- CrossGuard --------------------------------------------------------------------------


def test_the_pack_judges_gpu_monitoring_like_aistack_check():
    from aistack import engine, policy
    from aistack.policy.crossguard import graph_from_policy_resources

    from ...crossguard_resources import policy_resources

    def program():
        _team()
        aistack_k8s.TeamNamespace(
            "loose", {"team": "cv", "gpus": 2, "governance": GOVERNANCE, "namespace": "loose"}
        )
        _monitoring(platform="gke-managed-prometheus", namespaces=["ml-train"])
        _prometheus_rule(IDLE.replace('exported_pod!=""', 'exported_namespace="other"'), "loose")

    graph = engine.run(program)
    rebuilt = graph_from_policy_resources(policy_resources(graph))
    ids = ("AIS-C5-04", "AIS-T3-02", "AIS-C5-05")
    rules = [r for r in policy.all_rules() if r.id in ids]
    assert len(rules) == len(ids)
    for rule in rules:
        ours = {(f.resource_name, f.status) for f in rule.evaluate(graph)}
        theirs = {(f.resource_name, f.status) for f in rule.evaluate(rebuilt)}
        assert ours == theirs, rule.id
        assert ("loose" if rule.id == "AIS-C5-05" else "loose-namespace", "non-compliant") in ours
        assert (
            "gpu-rules" if rule.id == "AIS-C5-05" else "ml-train-namespace",
            "compliant",
        ) in ours


def test_team_namespaces_with_gpu_monitoring_pass_every_rule():
    from aistack import engine, policy

    def program():
        team = _team()
        aistack_k8s.TeamNamespace(
            "ml-serve", {"team": "ml", "tier": "serve", "gpus": 2, "governance": GOVERNANCE}
        )
        # The queue a namespace with GPUs needs (AIS-C5-03).
        aistack_k8s.TrainingQueue(
            "ml-gpu", {"governance": GOVERNANCE, "namespaces": [team], "flavors": [spot_flavor()]}
        )
        _monitoring(selectorLabels={"release": "kube-prometheus-stack"})

    graph = engine.run(program)
    failed = [
        (rule.id, f.resource_name, f.message)
        for rule in policy.all_rules()
        for f in rule.evaluate(graph)
        if f.status == "non-compliant"
    ]
    assert failed == []
