"""The GCP guardrails stack: previews offline, passes every rule it touches, refuses bad
config before registering anything, and tells the team what to do next."""

from pathlib import Path

import pytest

from aistack import engine
from aistack.cli import app
from aistack.engine.gcp_cloud import missing_api_dependencies, project_number

PROJECT = Path(__file__).resolve().parents[1]
# The module on one pytest-xdist worker: its module-scoped preview of the stack runs once.
pytestmark = pytest.mark.xdist_group("stacks-gcp-guardrails")


@pytest.fixture(scope="module")
def graph():
    return engine.run_project(PROJECT, stack="dev")


def test_every_checklist_item_it_touches_passes(graph, aistack_stack):
    # C1 is the project's quota stack's (stacks/gcp files the quotas; this one checks).
    aistack_stack.kept(graph, "C3", "C4", "C6", "D1", "D5", "E1")


def test_the_gpu_quota_is_checked_not_filed_beside_the_project_s_quota_stack(graph):
    # One preference per quota and dimensions in a project (Cloud Quotas QuotaPreference):
    # a second stack filing the ones stacks/gcp files would fail with 409.
    assert graph.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference") == []
    (quota,) = graph.of_type("aistack:index:GcpGpuQuota")
    outputs = graph.registered_outputs[quota.urn]
    assert outputs["mode"] == "check"
    assert {r["quota_id"] for r in outputs["requests"].values()} == {
        "GPUS-ALL-REGIONS-per-project",
        "PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region",
    }


def test_the_check_command_passes_the_stack():
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["check", str(PROJECT)])
    # Exit 1 would mean a failing item; 0 means every item is passing, documented or n/a.
    assert result.exit_code == 0, result.output
    assert "items passing, documented or the cloud's" in result.output


def test_every_google_resource_waits_for_the_api_it_calls(graph):
    assert missing_api_dependencies(graph) == []


def test_the_budget_watches_this_project_by_number_with_the_kill_switch_on(graph):
    (budget,) = graph.of_type("gcp:billing/budget:Budget")
    assert budget.get("budgetFilter", "projects") == [f"projects/{project_number('team-ml-prod')}"]
    assert budget.get("budgetFilter", "creditTypesTreatment") == "EXCLUDE_ALL_CREDITS"
    (function,) = graph.of_type("gcp:cloudfunctionsv2/function:Function")
    env = function.get("serviceConfig", "environmentVariables")
    assert env["AISTACK_KILL_SWITCH"] == "true"
    assert env["AISTACK_DAILY_LIMIT"] == "100"  # 3000 a month over 30 days
    assert env["AISTACK_ALLOW_DISABLE_BILLING"] == "false"
    assert function.get("serviceConfig", "ingressSettings") == "ALLOW_INTERNAL_ONLY"


def test_no_service_account_key_exists_and_ci_signs_in_by_federation(graph):
    assert graph.of_type("gcp:serviceaccount/key:Key") == []
    (provider,) = graph.of_type("gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider")
    assert "acme/ml-platform" in provider.get("attributeCondition")


def test_data_stays_in_the_stack_region_and_is_kept_on_destroy(graph):
    for bucket in graph.of_type("gcp:storage/bucket:Bucket"):
        assert bucket.get("location") == "europe-west4", bucket.name
    for name in ("dataset-bucket", "checkpoints-bucket", "logs-bucket"):
        assert graph.named(name).get("deletionPolicy") == "PREVENT"


def test_outputs_say_what_to_do_next(graph):
    outputs = graph.stack_outputs
    assert (
        outputs["registry"] == "europe-west4-docker.pkg.dev/team-ml-prod/images-e343d5"
    )  # ends in the stack's digest
    assert outputs["ci_service_account"].endswith("@team-ml-prod.iam.gserviceaccount.com")
    assert outputs["workload_identity_provider"].startswith("projects/")
    assert any("PREEMPTIBLE-NVIDIA-L4" in s for s in outputs["gpu_quota"].values())


def test_bad_config_is_one_error_before_the_first_resource(aistack_stack):
    error = aistack_stack.config_error(
        PROJECT,
        {
            "gcp-guardrails:billingAccount": "my-billing-account",  # the 7th block
            "gcp-guardrails:maxTrainingNodes": 0,  # the last
        },
    )
    fields = error.fields
    assert any(f.startswith("budget.billingAccount") for f in fields), fields
    assert any(f.startswith("gpuQuota.needs") for f in fields), fields
