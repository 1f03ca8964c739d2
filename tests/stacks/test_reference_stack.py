"""The reference stack, as a newcomer runs it: whole platform, nothing failing, next steps."""

from pathlib import Path

import pytest

from aistack import cost, engine, policy
from tests._harness import previews

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def graph():
    return previews.run_project(ROOT, stack="dev")


def test_it_composes_the_whole_platform(graph):
    components = {r.type.removeprefix("aistack:index:") for r in graph.components()}
    assert {
        "AwsBudgetGuard",
        "AwsDatasetBucket",
        "AwsContainerRegistry",
        "AwsWorkloadIdentity",
        "AwsNetwork",
        "AwsTrainingPool",
        "AwsNotebook",
        "AwsGpuQuota",
        "AwsAuditTrail",
    } <= components
    kinds = {r.inputs["kind"] for r in graph.of_type("aistack:index:AwsDatasetBucket")}
    assert kinds == {"dataset", "checkpoints", "models", "logs", "audit"}


def test_no_checklist_item_fails(graph):
    report = policy.evaluate(graph)
    failing = [f"{f.rule_id} {f.resource_name}: {f.message}" for f in report.violations]
    assert failing == []
    states = {item.id: item.state for item in report.items()}
    assert all(state in ("passing", "documented-only") for state in states.values()), states


def test_it_costs_less_than_the_naive_baseline(graph):
    estimate = cost.estimate(graph)
    assert 0 < estimate.total < estimate.naive_total
    assert {"training", "dataset", "network"} <= set(estimate.by_component())


def test_outputs_tell_a_user_what_to_do_next(graph):
    outputs = graph.stack_outputs
    assert outputs["submit_training_job"].startswith("aws batch submit-job")
    assert outputs["notebook_url"].startswith("https://")
    assert outputs["gpu_quota_requests"]
    assert outputs["inference_endpoint"].startswith("http")
    assert "modify-listener" in outputs["inference_rollback"]


def test_everything_is_in_the_configured_region_and_tagged_with_the_stack(graph):
    for resource in graph.resources:
        if resource.type.startswith("aws:") and "region" in resource.outputs:
            assert resource.outputs["region"] == "us-east-1", resource.name
        tags_all = resource.outputs.get("tagsAll")
        if isinstance(tags_all, dict):
            assert tags_all.get("aistack:stack") == "aistack-dev", resource.name


def test_platform_alarms_notify_the_alert_topic(graph):
    topic = graph.named("budget-alerts").outputs["arn"]
    alarms = graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
    starvation = graph.named("training-gpu-starvation")
    assert starvation.inputs["alarmActions"] == [topic]
    assert sum(1 for a in alarms if topic in (a.inputs.get("alarmActions") or [])) >= 4
    policy = graph.named("budget-alerts-policy").inputs["policy"]
    assert "cloudwatch.amazonaws.com" in policy


def test_a_bad_block_anywhere_fails_before_the_first_resource(tmp_path, monkeypatch):
    import shutil

    import yaml

    from aistack.engine import runner
    from aistack.errors import ConfigError

    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    document = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    document["config"]["aistack:training"]["maxNodes"] = 0  # the 9th block of 12
    document["config"]["aistack:gpuQuota"]["headroomPercentt"] = 10  # the last, a typo
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))

    registered = []
    register = runner.RecordingMonitor.RegisterResource

    def counting(self, request):
        if not request.type.startswith(("pulumi:providers:", "pulumi:pulumi:")):
            registered.append(request.name)
        return register(self, request)

    monkeypatch.setattr(runner.RecordingMonitor, "RegisterResource", counting)
    with pytest.raises(ConfigError) as caught:
        engine.run_project(tmp_path, stack="dev")
    assert sorted(caught.value.fields) == ["gpuQuota.headroomPercentt", "training.maxNodes"]
    assert registered == []
