"""gcp.BudgetGuard: monthly budget on the project number, daily alerts, least-privilege
kill switch, and the simulated GCP answering each of its types in the API's formats."""

import re
from pathlib import Path

import pytest
from pydantic.alias_generators import to_snake

from aistack import gcp
from aistack.engine.gcp_cloud import missing_api_dependencies, project_number
from aistack.errors import ConfigError
from aistack.gcp.functions import BUDGET_GUARD_SOURCE, budget_guard_permissions
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-budget_guard")

PROJECT = "team-ml-prod"
ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
BUDGET = "gcp:billing/budget:Budget"
FUNCTION = "gcp:cloudfunctionsv2/function:Function"
ROLE = "gcp:projects/iAMCustomRole:IAMCustomRole"
CHANNEL = "gcp:monitoring/notificationChannel:NotificationChannel"
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"


def _args(governance, **overrides):
    return {
        "governance": governance,
        "region": "europe-west4",
        "billingAccount": ACCOUNT,
        "monthlyLimit": 3000,
        "alertEmails": ["ml-team@example.com", "finance@example.com"],
        **overrides,
    }


def _stack(governance, **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        gcp.BudgetGuard("budget", _args(governance, **overrides), services=apis)

    return program


@pytest.fixture(scope="module")
def default_graph():
    """The default guard (no kill switch), built once for the module's tests that read it."""
    with shared(run_stack(_stack(dict(GOVERNANCE)))) as graph:
        yield graph


@pytest.fixture(scope="module")
def kill_switch_graph():
    """The guard with its kill switch on, built once for the tests that read it."""
    with shared(run_stack(_stack(dict(GOVERNANCE), killSwitch=True))) as graph:
        yield graph


def test_the_budget_counts_the_projects_gross_spend_by_project_number(default_graph):
    budget = default_graph.named("budget-budget")
    budget_filter = budget.inputs["budgetFilter"]
    # The number, not the id: an id makes a perpetual diff (research §D1.11).
    assert budget_filter["projects"] == [f"projects/{project_number(PROJECT)}"]
    assert re.fullmatch(r"projects/\d{12}", budget_filter["projects"][0])
    assert budget_filter["calendarPeriod"] == "MONTH"
    assert budget_filter["creditTypesTreatment"] == "EXCLUDE_ALL_CREDITS"
    assert "labels" not in budget_filter
    assert budget.inputs["billingAccount"] == ACCOUNT
    assert budget.inputs["amount"]["specifiedAmount"] == {
        "currencyCode": "USD",
        "units": "3000",  # a string in pulumi-gcp (google.type.Money)
        "nanos": 0,
    }


def test_thresholds_are_fractions_with_actual_and_forecast(default_graph):
    rules = default_graph.named("budget-budget").inputs["thresholdRules"]
    # pulumi-gcp BudgetThresholdRule: "a 1.0-based percentage, so 0.5 = 50%".
    assert rules == [
        {"thresholdPercent": 0.5, "spendBasis": "CURRENT_SPEND"},
        {"thresholdPercent": 0.8, "spendBasis": "CURRENT_SPEND"},
        {"thresholdPercent": 1, "spendBasis": "CURRENT_SPEND"},
        {"thresholdPercent": 1, "spendBasis": "FORECASTED_SPEND"},
    ]


def test_every_update_goes_to_the_topic_and_the_email_channels(default_graph):
    graph = default_graph
    rule = graph.named("budget-budget").inputs["allUpdatesRule"]
    topic = graph.named("budget-budget-updates")
    channels = graph.of_type(CHANNEL)
    assert rule["pubsubTopic"] == topic.id
    assert re.fullmatch(rf"projects/{PROJECT}/topics/budget-budget-updates-[0-9a-f]+", topic.id)
    assert rule["schemaVersion"] == "1.0"  # programmatic notifications need it
    assert sorted(rule["monitoringNotificationChannels"]) == sorted(c.id for c in channels)
    assert {c.inputs["labels"]["email_address"] for c in channels} == {
        "ml-team@example.com",
        "finance@example.com",
    }
    assert {c.inputs["type"] for c in channels} == {"email"}
    for channel in channels:
        assert re.fullmatch(rf"projects/{PROJECT}/notificationChannels/\d{{19}}", channel.id)
    assert rule["disableDefaultIamRecipients"] is False
    assert topic.inputs["messageStoragePolicy"] == {"allowedPersistenceRegions": ["europe-west4"]}


def test_billing_admins_can_be_left_out_and_the_label_filter_switched_on(run, governance):
    budget = run(_stack(governance, notifyBillingAdmins=False, filterByStackLabel=True)).named(
        "budget-budget"
    )
    assert budget.inputs["allUpdatesRule"]["disableDefaultIamRecipients"] is True
    # A budget filter takes exactly one label.
    assert budget.inputs["budgetFilter"]["labels"] == {"aistack-stack": "aistack-dev"}


def test_the_function_is_triggered_by_the_budget_topic_and_reachable_only_internally(default_graph):
    graph = default_graph
    function = graph.named("budget-function")
    trigger = function.inputs["eventTrigger"]
    assert trigger["eventType"] == "google.cloud.pubsub.topic.v1.messagePublished"
    assert trigger["pubsubTopic"] == graph.named("budget-budget-updates").id
    assert trigger["retryPolicy"] == "RETRY_POLICY_RETRY"
    service = function.inputs["serviceConfig"]
    assert service["ingressSettings"] == "ALLOW_INTERNAL_ONLY"
    assert service["serviceAccountEmail"] == graph.named("budget-fn-sa").outputs["email"]
    assert trigger["serviceAccountEmail"] == graph.named("budget-ev-sa").outputs["email"]
    assert function.inputs["buildConfig"]["serviceAccount"] == graph.named("budget-build-sa").id
    assert function.inputs["buildConfig"]["runtime"] == "python312"
    assert function.inputs["buildConfig"]["entryPoint"] == "handle_budget_update"
    assert len(function.inputs["name"]) <= 49  # a Cloud Run service name
    assert (
        function.id
        == f"projects/{PROJECT}/locations/europe-west4/functions/{function.inputs['name']}"
    )


def test_the_function_knows_its_budget_and_the_daily_limit(run, governance):
    graph = run(_stack(governance, monthlyLimit=1000))
    env = graph.named("budget-function").inputs["serviceConfig"]["environmentVariables"]
    budget = graph.named("budget-budget")
    assert re.fullmatch(rf"billingAccounts/{ACCOUNT}/budgets/[0-9a-f-]{{36}}", budget.id)
    assert env["AISTACK_BUDGET_ID"] == budget.id.rsplit("/", 1)[1]
    assert env["AISTACK_DAILY_LIMIT"] == "34"  # ceil(1000 / 30)
    assert env["AISTACK_STATE_BUCKET"] == graph.named("budget-guard").outputs["name"]
    assert env["AISTACK_KILL_SWITCH"] == "false"
    assert env["AISTACK_ALLOW_DISABLE_BILLING"] == "false"


def test_the_source_is_the_function_module_and_its_requirements(default_graph):
    graph = default_graph
    source = graph.named("budget-source")
    assert sorted(source.inputs["source"]["archive"]) == ["main.py", "requirements.txt"]
    assert re.fullmatch(r"source/budget-guard-[0-9a-f]{16}\.zip", source.inputs["name"])
    storage = graph.named("budget-function").inputs["buildConfig"]["source"]["storageSource"]
    assert storage == {
        "bucket": graph.named("budget-guard").outputs["name"],
        "object": source.inputs["name"],
    }


def test_requirements_name_the_client_libraries_the_tests_use():
    requirements = (BUDGET_GUARD_SOURCE / "requirements.txt").read_text()
    for package in ("google-cloud-storage", "google-cloud-compute", "google-cloud-container"):
        assert re.search(rf"^{package}>=", requirements, re.MULTILINE), package


def test_without_the_kill_switch_the_function_may_only_touch_its_state(default_graph):
    graph = default_graph
    roles = graph.of_type(ROLE)
    assert [r.name for r in roles] == ["budget-state-role"]
    assert roles[0].inputs["permissions"] == sorted(budget_guard_permissions()["state"])
    grant = graph.named("budget-state-grant")
    assert (
        grant.inputs["role"]
        == roles[0].id
        == f"projects/{PROJECT}/roles/{roles[0].inputs['roleId']}"
    )
    assert grant.inputs["condition"]["expression"].endswith('/objects/state/")')
    function_member = graph.named("budget-fn-sa").outputs["member"]
    project_grants = [
        r
        for r in graph.of_type("gcp:projects/iAMMember:IAMMember")
        if r.inputs["member"] == function_member
    ]
    assert project_grants == []


def test_the_kill_switch_role_holds_exactly_the_calls_the_code_makes(kill_switch_graph):
    graph = kill_switch_graph
    role = graph.named("budget-killswitch-role")
    assert role.inputs["permissions"] == sorted(budget_guard_permissions()["kill_switch"])
    # GKE "API permissions": node pools are listed with container.clusters.get and resized
    # with container.clusters.update; there is no container.nodePools.* permission.
    assert not any(p.startswith("container.nodePools") for p in role.inputs["permissions"])
    assert "resourcemanager.projects.deleteBillingAssignment" not in role.inputs["permissions"]
    grant = graph.named("budget-kill-switch-grant")
    assert grant.inputs["role"] == role.id
    assert grant.inputs["member"] == graph.named("budget-fn-sa").outputs["member"]
    env = graph.named("budget-function").inputs["serviceConfig"]["environmentVariables"]
    assert env["AISTACK_KILL_SWITCH"] == "true"


def test_disabling_billing_adds_only_the_billing_permission(run, governance):
    graph = run(_stack(governance, killSwitch=True, allowDisableBilling=True))
    permissions = graph.named("budget-killswitch-role").inputs["permissions"]
    assert set(permissions) - set(budget_guard_permissions()["kill_switch"]) == {
        "resourcemanager.projects.deleteBillingAssignment"
    }


def test_the_trigger_identity_may_only_invoke_the_function(default_graph):
    graph = default_graph
    trigger = graph.named("budget-ev-sa")
    invoker = graph.named("budget-trigger-invoker")
    assert invoker.inputs["role"] == "roles/run.invoker"
    assert invoker.inputs["name"] == graph.named("budget-function").outputs["name"]
    assert invoker.inputs["member"] == trigger.outputs["member"]
    granted_to_trigger = [
        r
        for r in graph.resources
        if r.custom and r.inputs.get("member") == trigger.outputs["member"]
    ]
    assert granted_to_trigger == [invoker]
    # The Pub/Sub service agent may mint tokens for the trigger's account, and no other.
    token = graph.named("budget-pubsub-token-creator")
    assert token.inputs["serviceAccountId"] == trigger.id
    assert token.inputs["member"] == (
        f"serviceAccount:service-{project_number(PROJECT)}@gcp-sa-pubsub.iam.gserviceaccount.com"
    )


def test_no_key_is_ever_created(kill_switch_graph):
    graph = kill_switch_graph
    assert graph.of_type("gcp:serviceaccount/key:Key") == []


def test_a_log_based_policy_mails_the_daily_alert(default_graph):
    graph = default_graph
    service = graph.named("budget-function").inputs["name"]
    policy = graph.named("budget-daily-alert")
    log_filter = policy.inputs["conditions"][0]["conditionMatchedLog"]["filter"]
    assert f'resource.labels.service_name="{service}"' in log_filter
    assert 'jsonPayload.aistack_event="daily_limit_exceeded"' in log_filter
    # Log-match conditions require a notification rate limit.
    assert policy.inputs["alertStrategy"]["notificationRateLimit"] == {"period": "300s"}
    assert sorted(policy.inputs["notificationChannels"]) == sorted(
        c.id for c in graph.of_type(CHANNEL)
    )
    errors = graph.named("budget-guard-errors")
    assert "severity>=ERROR" in errors.inputs["conditions"][0]["conditionMatchedLog"]["filter"]
    for p in graph.of_type(POLICY):
        assert re.fullmatch(rf"projects/{PROJECT}/alertPolicies/\d{{19}}", p.id)


def test_the_state_bucket_is_private_versioned_and_in_region(default_graph):
    bucket = default_graph.named("budget-guard")
    assert bucket.inputs["publicAccessPrevention"] == "enforced"
    assert bucket.inputs["uniformBucketLevelAccess"] is True
    assert bucket.inputs["versioning"] == {"enabled": True}
    assert bucket.outputs["location"] == "EUROPE-WEST4"


def test_every_resource_waits_for_its_api(kill_switch_graph):
    graph = kill_switch_graph
    assert missing_api_dependencies(graph) == []
    function = graph.named("budget-function")
    enabled = {graph.by_urn(u).inputs.get("service") for u in function.dependencies}
    for api in (
        "cloudfunctions.googleapis.com",
        "run.googleapis.com",
        "eventarc.googleapis.com",
        "cloudbuild.googleapis.com",
        "artifactregistry.googleapis.com",
        "pubsub.googleapis.com",
    ):
        assert api in enabled, api
    # The roles exist before the first event can use them.
    grants = {graph.by_urn(u).name for u in function.dependencies}
    assert {
        "budget-state-grant",
        "budget-kill-switch-grant",
        "budget-build-logs",
        "budget-build-images",
        "budget-build-source",
        "budget-eventarc-agent-role",
    } <= grants


def test_the_eventarc_agent_exists_and_holds_its_role_before_the_function(default_graph):
    """Fresh project, one `up`: the function's trigger is validated as Eventarc's service
    agent, whose automatic grant lags the API's enabling ("Permission denied while using
    the Eventarc Service Agent", terraform-google-modules/terraform-docs-samples#486;
    hashicorp/terraform-provider-google#25294). The agent is made to exist and granted
    roles/eventarc.serviceAgent before the function is created."""
    graph = default_graph
    agent = graph.named("budget-eventarc-agent")
    assert agent.inputs["service"] == "eventarc.googleapis.com"
    grant = graph.named("budget-eventarc-agent-role")
    assert grant.inputs["role"] == "roles/eventarc.serviceAgent"
    assert grant.inputs["member"] == agent.outputs["member"]
    assert grant.inputs["member"].endswith("@gcp-sa-eventarc.iam.gserviceaccount.com")
    assert grant.urn in graph.named("budget-function").dependencies


def test_the_build_account_holds_the_documented_minimum_and_no_builder_role(default_graph):
    """Cloud Functions docs, "Custom service account for Cloud Build": Logs Writer, Artifact
    Registry Writer on the image repository, Storage Object Viewer on the source bucket.
    The repository is the guard's own (`dockerRepository`), so the writer grant is on it
    alone, not on the project."""
    graph = default_graph
    member = graph.named("budget-build-sa").outputs["member"]
    grants = {
        (g.type.rsplit(":", 1)[-1], g.inputs["role"])
        for g in graph.resources
        if g.inputs.get("member") == member
    }
    assert grants == {
        ("IAMMember", "roles/logging.logWriter"),
        ("RepositoryIamMember", "roles/artifactregistry.writer"),
        ("BucketIAMMember", "roles/storage.objectViewer"),
    }
    repository = graph.named("budget-builds")
    writer = graph.named("budget-build-images")
    assert writer.inputs["repository"] == repository.outputs["name"]
    function = graph.named("budget-function")
    assert function.inputs["buildConfig"]["dockerRepository"] == repository.id
    assert (
        graph.named("budget-build-source").inputs["bucket"]
        == graph.named("budget-guard").outputs["name"]
    )


def test_the_topic_and_the_image_repository_use_the_guards_key(default_graph):
    """CKV_GCP_83: the topic is CMEK-encrypted like the stack's buckets; the Pub/Sub and
    Artifact Registry agents hold Encrypter/Decrypter on the key before the topic and the
    repository name it (Pub/Sub and Artifact Registry CMEK docs)."""
    graph = default_graph
    key = graph.named("budget-key").id
    topic = graph.named("budget-budget-updates")
    repository = graph.named("budget-builds")
    assert topic.inputs["kmsKeyName"] == key == repository.inputs["kmsKeyName"]
    for grant_name, agent_name, resource in (
        ("budget-key-pubsub", "budget-pubsub-agent", topic),
        ("budget-key-registry", "budget-registry-agent", repository),
    ):
        grant = graph.named(grant_name)
        assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
        assert grant.inputs["cryptoKeyId"] == key
        assert grant.inputs["member"] == graph.named(agent_name).outputs["member"]
        assert grant.urn in resource.dependencies


def test_a_given_key_is_used_and_none_is_made(run, governance):
    key = "projects/p/locations/europe-west4/keyRings/team/cryptoKeys/budget"
    graph = run(_stack(governance, kmsKeyName=key))
    assert graph.of_type("gcp:kms/cryptoKey:CryptoKey") == []
    assert graph.named("budget-budget-updates").inputs["kmsKeyName"] == key


def test_the_kill_switch_alert_mails_what_was_stopped(kill_switch_graph, default_graph):
    """The function logs `stopped` on its kill-switch entry; the policy extracts it into the
    e-mail (Cloud Monitoring LogMatch label_extractors, ${log.extracted_label.KEY})."""
    policy = kill_switch_graph.named("budget-kill-switch")
    [condition] = policy.inputs["conditions"]
    log = condition["conditionMatchedLog"]
    assert 'jsonPayload.aistack_event="kill_switch_acted"' in log["filter"]
    assert log["labelExtractors"] == {"stopped": "EXTRACT(jsonPayload.stopped)"}
    assert "${log.extracted_label.stopped}" in policy.inputs["documentation"]["content"]
    errors = kill_switch_graph.named("budget-guard-errors")
    assert "kill_switch_acted" in errors.inputs["conditions"][0]["conditionMatchedLog"]["filter"]
    assert "budget-kill-switch" not in {r.name for r in default_graph.resources}


@pytest.mark.parametrize(
    "old, new", [("monthlyLimitUsd", "monthlyLimit"), ("dailyLimitUsd", "dailyLimit")]
)
def test_the_old_limit_names_still_work_with_a_warning(run, governance, old, new):
    values = {"monthlyLimit": 3000, "dailyLimit": 150}
    args = _args(governance, **{new: values[new]})
    args[old] = args.pop(new)
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated, write {new}"):
        parsed = gcp.BudgetGuardArgs.parse(args)
    assert getattr(parsed, to_snake(new)) == values[new]


def test_an_old_and_a_new_limit_name_together_are_refused(governance):
    args = _args(governance, monthlyLimitUsd=3000)
    with pytest.raises(ConfigError, match="monthlyLimitUsd and monthlyLimit are both given"):
        gcp.BudgetGuardArgs.parse(args)


def test_default_project_services_enable_what_the_guard_needs(run, governance):
    services = gcp.ProjectServicesArgs(project=PROJECT).all_services()
    for api in (
        "billingbudgets.googleapis.com",
        "cloudfunctions.googleapis.com",
        "eventarc.googleapis.com",
    ):
        assert api in services


def test_bad_input_is_one_config_error_before_anything_is_registered(run, governance):
    def program(**overrides):
        def body():
            apis = gcp.ProjectServices(
                "apis", {"project": PROJECT, "services": ["iam.googleapis.com"]}
            )
            gcp.BudgetGuard("budget", _args(governance, **overrides), services=apis)

        return body

    with pytest.raises(ConfigError) as caught:
        run(
            program(
                region="us-east1",
                monthlyActualThresholds=[50, 80, 100],
                killSwitchDryRun=True,
            )
        )
    text = str(caught.value)
    for field in ("monthlyActualThresholds", "region", "services", "killSwitchDryRun"):
        assert f"budget.{field}" in text, field
    assert "billingbudgets.googleapis.com" in text and "cloudfunctions.googleapis.com" in text
    # Bad required fields are reported together too.
    with pytest.raises(ConfigError) as caught:
        run(
            program(
                billingAccount="0123456789",
                alertEmails=[f"p{i}@example.com" for i in range(6)],
            )
        )
    assert "budget.billingAccount" in str(caught.value)
    assert "budget.alertEmails" in str(caught.value)


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"killSwitch": True, "monthlyActualThresholds": [0.5, 0.9]}, "monthlyActualThresholds"),
        ({"allowDisableBilling": True}, "allowDisableBilling"),
        ({"dailyLimit": 5000}, "dailyLimit"),
        ({"currencyCode": "usd"}, "currencyCode"),
    ],
)
def test_inconsistent_settings_are_refused(run, governance, overrides, field):
    with pytest.raises(ConfigError, match=f"budget.{field}"):
        run(_stack(governance, **overrides))


def test_the_function_module_imports_nothing_from_aistack():
    source = Path(BUDGET_GUARD_SOURCE / "main.py").read_text()
    assert not re.search(r"^\s*(from|import) aistack", source, re.MULTILINE)


def test_the_guard_bucket_logs_usage_to_the_stacks_logs_bucket(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        logs = gcp.DatasetBucket(
            "logs",
            {"kind": "logs", "region": "europe-west4", "governance": governance},
            services=apis,
        )
        gcp.BudgetGuard("budget", _args(governance), services=apis, access_logs=logs)

    graph = run(program)
    logging = graph.named("budget-guard").inputs["logging"]
    assert logging["logBucket"] == graph.named("logs-bucket").outputs["name"]


def test_usage_logs_only_go_to_a_logs_bucket(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        models = gcp.DatasetBucket(
            "models",
            {"kind": "models", "region": "europe-west4", "governance": governance},
            services=apis,
        )
        gcp.BudgetGuard("budget", _args(governance), services=apis, access_logs=models)

    with pytest.raises(ConfigError, match="budget.access_logs"):
        run(program)
