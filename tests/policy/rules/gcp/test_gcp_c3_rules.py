"""GCP C3 rules: budget on the project (AIS-C3-04), daily alert (AIS-C3-05), budget
function identity (AIS-C3-06)."""

import pulumi
import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp
from aistack.contracts.naming import stack_scoped
from aistack.engine.gcp_cloud import project_number

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
PROJECT = "team-ml-prod"
CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
# Compute Engine's default service account: `<NUMBER>-compute@developer.gserviceaccount.com`.
DEFAULT_COMPUTE_ACCOUNT = f"{project_number(PROJECT)}-compute@developer.gserviceaccount.com"
GOOD_FILTER = {
    "projects": [f"projects/{project_number(PROJECT)}"],
    "credit_types_treatment": "EXCLUDE_ALL_CREDITS",
}
GOOD_RULES = [
    {"threshold_percent": 0.5},
    {"threshold_percent": 1.0},
    {"threshold_percent": 1.0, "spend_basis": "FORECASTED_SPEND"},
]


def _guard(**overrides):
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
        aistack_gcp.BudgetGuard(
            "budget",
            {
                "governance": GOVERNANCE,
                "region": "europe-west4",
                "billingAccount": ACCOUNT,
                "monthlyLimit": 3000,
                "alertEmails": ["ml@example.com"],
                **overrides,
            },
            services=apis,
        )

    return program


def _budget(topic=True, **overrides):
    """A bare budget (and topic) with `overrides` on the good settings."""

    def program():
        updates = gcp.pubsub.Topic("updates", project=PROJECT) if topic else None
        args = {
            "billing_account": ACCOUNT,
            "amount": {"specified_amount": {"units": "1000"}},
            "budget_filter": GOOD_FILTER,
            "threshold_rules": GOOD_RULES,
            "all_updates_rule": {"pubsub_topic": updates.id} if updates else None,
            **overrides,
        }
        budget = gcp.billing.Budget("raw", **args)
        _ = budget

    return program


def _verdicts(verdicts, rule_id, program):
    return verdicts(rule_id, program, **CONFIG)


# ---- AIS-C3-04 ---------------------------------------------------------------------------


def test_c3_04_the_guards_budget_is_on_the_project_gross_with_a_forecast(verdicts):
    assert _verdicts(verdicts, "AIS-C3-04", _guard()) == {"budget-budget": "compliant"}


def test_c3_04_a_bare_budget_done_right_passes(verdicts):
    assert _verdicts(verdicts, "AIS-C3-04", _budget()) == {"raw": "compliant"}


@pytest.mark.parametrize(
    "overrides",
    [
        {"budget_filter": {**GOOD_FILTER, "projects": [f"projects/{PROJECT}"]}},  # an id
        {"budget_filter": {"credit_types_treatment": "EXCLUDE_ALL_CREDITS"}},  # account-wide
        {"budget_filter": {**GOOD_FILTER, "credit_types_treatment": "INCLUDE_ALL_CREDITS"}},
        {"threshold_rules": GOOD_RULES[:2]},  # no forecast
        {"threshold_rules": [{"threshold_percent": 50}, GOOD_RULES[2]]},  # percent, not fraction
        {"budget_filter": {**GOOD_FILTER, "calendar_period": "YEAR"}},
    ],
)
def test_c3_04_a_budget_that_hides_or_misses_spend_fails(verdicts, overrides):
    assert _verdicts(verdicts, "AIS-C3-04", _budget(**overrides)) == {"raw": "non-compliant"}


def test_c3_04_a_gcp_stack_without_a_budget_fails(verdicts):
    def program():
        gcp.pubsub.Topic("lonely", project=PROJECT)

    assert _verdicts(verdicts, "AIS-C3-04", program) == {"": "non-compliant"}


# ---- AIS-C3-05 ---------------------------------------------------------------------------


def test_c3_05_the_guard_computes_and_alerts_the_daily_spend(verdicts):
    assert _verdicts(verdicts, "AIS-C3-05", _guard()) == {"budget-budget": "compliant"}


def test_c3_05_a_budget_alone_has_no_daily_alert(verdicts):
    assert _verdicts(verdicts, "AIS-C3-05", _budget()) == {"raw": "non-compliant"}


def test_c3_05_a_function_without_an_alert_policy_is_not_an_alert(verdicts):
    def program():
        updates = gcp.pubsub.Topic("updates", project=PROJECT)
        gcp.billing.Budget(
            "raw",
            billing_account=ACCOUNT,
            amount={"specified_amount": {"units": "1000"}},
            budget_filter=GOOD_FILTER,
            threshold_rules=GOOD_RULES,
            all_updates_rule={"pubsub_topic": updates.id},
        )
        gcp.cloudfunctionsv2.Function(
            "daily",
            name="daily",
            location="europe-west4",
            event_trigger={
                "event_type": "google.cloud.pubsub.topic.v1.messagePublished",
                "pubsub_topic": updates.id,
            },
            service_config={"environment_variables": {"AISTACK_DAILY_LIMIT": "100"}},
        )

    assert _verdicts(verdicts, "AIS-C3-05", program) == {"raw": "non-compliant"}


# ---- AIS-C3-06 ---------------------------------------------------------------------------


@pytest.mark.parametrize("overrides", [{}, {"killSwitch": True, "allowDisableBilling": True}])
def test_c3_06_the_guard_function_has_exactly_its_permissions(verdicts, overrides):
    assert _verdicts(verdicts, "AIS-C3-06", _guard(**overrides)) == {"budget-function": "compliant"}


def _guard_plus(extra):
    def program():
        _guard()()
        extra()

    return program


def _function_member():
    """The guard's function account, as gcp.BudgetGuard names it (stack-scoped); called
    inside the program, where the Pulumi project and stack are known."""
    account = stack_scoped("bg-budget-fn", pulumi.get_project(), pulumi.get_stack(), limit=30)
    email = f"{account}@{PROJECT}.iam.gserviceaccount.com"
    return email, f"serviceAccount:{email}"


def test_c3_06_a_broad_role_on_the_function_identity_fails(verdicts):
    def extra():
        gcp.projects.IAMMember(
            "too-much", project=PROJECT, role="roles/editor", member=_function_member()[1]
        )

    assert _verdicts(verdicts, "AIS-C3-06", _guard_plus(extra)) == {
        "budget-function": "non-compliant"
    }


def test_c3_06_billing_permissions_without_allowing_it_fail(verdicts):
    def extra():
        role = gcp.projects.IAMCustomRole(
            "sneaky",
            project=PROJECT,
            role_id="sneaky",
            title="sneaky",
            permissions=["resourcemanager.projects.deleteBillingAssignment"],
        )
        gcp.projects.IAMMember(
            "sneaky-grant", project=PROJECT, role=role.name, member=_function_member()[1]
        )

    assert _verdicts(verdicts, "AIS-C3-06", _guard_plus(extra)) == {
        "budget-function": "non-compliant"
    }


def test_c3_06_a_function_as_the_default_compute_account_fails(verdicts):
    def program():
        updates = gcp.pubsub.Topic("updates", project=PROJECT)
        gcp.billing.Budget(
            "raw",
            billing_account=ACCOUNT,
            amount={"specified_amount": {"units": "1000"}},
            all_updates_rule={"pubsub_topic": updates.id},
        )
        gcp.cloudfunctionsv2.Function(
            "guard",
            name="guard",
            location="europe-west4",
            event_trigger={
                "event_type": "google.cloud.pubsub.topic.v1.messagePublished",
                "pubsub_topic": updates.id,
            },
            service_config={
                "service_account_email": DEFAULT_COMPUTE_ACCOUNT,
                "ingress_settings": "ALLOW_INTERNAL_ONLY",
            },
        )

    assert _verdicts(verdicts, "AIS-C3-06", program) == {"guard": "non-compliant"}


def test_c3_rules_leave_other_stacks_alone(verdicts):
    def program():
        pulumi.ComponentResource("team:index:Thing", "thing")

    for rule_id in ("AIS-C3-04", "AIS-C3-05", "AIS-C3-06"):
        assert verdicts(rule_id, program) == {"": "not-applicable"}
