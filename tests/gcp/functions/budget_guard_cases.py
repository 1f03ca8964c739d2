"""Cases: the budget guard function against the real google-cloud clients, answered locally.

Run in a process of their own by test_budget_guard_function.py (see there why).

Each test points google-cloud-storage, google-cloud-compute, google-cloud-container and a
google-auth AuthorizedSession at `fake_google.FakeGoogle` (client_options api_endpoint,
AnonymousCredentials): no live API. Budget updates are shaped as Cloud Billing sends them
(docs "Set up programmatic notifications": attributes billingAccountId, budgetId,
schemaVersion "1.0"; data costAmount, costIntervalStart, budgetAmount, currencyCode, and
alertThresholdExceeded once a threshold is crossed), wrapped as Eventarc's Pub/Sub
CloudEvent data (`{"message": {"data": base64, "attributes", "publishTime"}}`).
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime

import pytest
from google.api_core import exceptions as google_errors
from google.auth.credentials import AnonymousCredentials

from aistack.gcp.functions.budget_guard import main
from tests.gcp.functions.fake_google import FakeGoogle

PROJECT = "team-ml-prod"
STACK = "aistack-dev"
BUDGET = "6a1f0e2c-1b7c-4a43-9d39-0d3f4e5a6b7c"
TRAINING = {"aistack-stack": STACK, "aistack-workload": "training"}
#: One L4 per node, as GKE lists a g2-standard-8 pool's accelerators (GKE API NodeConfig
#: `accelerators[]`: acceleratorCount (int64, a string in JSON), acceleratorType).
L4 = [{"acceleratorCount": "1", "acceleratorType": "nvidia-l4"}]
# The month starts at midnight US Pacific (UTC-8 in December): 08:00Z.
INTERVAL = "2026-12-01T08:00:00Z"
STATE = f"state/{BUDGET}.json"


@pytest.fixture
def google(monkeypatch):
    # The fake finishes GKE operations on the first poll: no need to wait between polls.
    monkeypatch.setattr(main, "_POLL_SECONDS", 0.0)
    fake = FakeGoogle(PROJECT)
    server, endpoint = fake.serve()
    fake.endpoint = endpoint
    yield fake
    server.shutdown()


def _config(**overrides):
    values = {
        "project": PROJECT,
        "stack": STACK,
        "budget_id": BUDGET,
        "state_bucket": "guard-state",
        "daily_limit": 100.0,
        **overrides,
    }
    return main.Config(**values)


def _update(cost, at, *, budget=BUDGET, interval=INTERVAL, actual=None):
    data = {
        "budgetDisplayName": "aistack-dev",
        "costAmount": cost,
        "costIntervalStart": interval,
        "budgetAmount": 3000.0,
        "budgetAmountType": "SPECIFIED_AMOUNT",
        "currencyCode": "USD",
    }
    if actual is not None:
        data["alertThresholdExceeded"] = actual
    return {
        "message": {
            "data": base64.b64encode(json.dumps(data).encode()).decode(),
            "attributes": {
                "billingAccountId": "0X0X0X-0X0X0X-0X0X0X",
                "budgetId": budget,
                "schemaVersion": "1.0",
            },
            "messageId": "1",
            "publishTime": at,
        },
        "subscription": "projects/team-ml-prod/subscriptions/eventarc-guard",
    }


def _send(google, cost, at, config=None, **kwargs):
    clients = main.Clients.create(
        PROJECT, endpoint=google.endpoint, credentials=AnonymousCredentials()
    )
    return main.process(
        _update(cost, at, **kwargs),
        config or _config(),
        clients,
        now=datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone(UTC),
    )


def _events(capsys, event):
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    return [line for line in lines if line.get("aistack_event") == event]


def test_crossing_the_daily_limit_alerts_once_that_day(google, capsys):
    _send(google, 40.0, "2026-12-02T09:00:00Z")  # first update of the 2nd: from 40
    assert _send(google, 90.0, "2026-12-02T15:00:00Z")["day_spend"] == 50.0
    first = _send(google, 150.0, "2026-12-02T21:00:00Z")
    later = _send(google, 190.0, "2026-12-03T03:00:00Z")  # still the 2nd in Pacific time
    assert first["alerted"] and first["day_spend"] == 110.0
    assert not later["alerted"] and later["day_spend"] == 150.0
    alerts = _events(capsys, main.EVENT_DAILY_LIMIT)
    assert len(alerts) == 1
    assert alerts[0]["severity"] == "ERROR"
    assert alerts[0]["day"] == "2026-12-02" and alerts[0]["daily_limit"] == 100.0


def test_a_repeated_message_is_not_counted_twice(google, capsys):
    _send(google, 0.0, "2026-12-01T09:00:00Z")
    _send(google, 80.0, "2026-12-01T12:00:00Z")
    repeated = _send(google, 80.0, "2026-12-01T12:00:00Z")
    assert repeated["duplicate"] and repeated["day_spend"] == 80.0
    assert google.object(STATE)["last_cost"] == 80.0
    # An older update delivered late does not lower the total either.
    late = _send(google, 30.0, "2026-12-01T10:00:00Z")
    assert late["stale"] and late["day_spend"] == 80.0
    assert _events(capsys, main.EVENT_DAILY_LIMIT) == []


def test_the_first_day_of_the_month_counts_from_zero(google):
    assert _send(google, 120.0, "2026-12-01T20:00:00Z")["alerted"]


def test_a_new_day_resets_the_days_spend(google, capsys):
    _send(google, 0.0, "2026-12-01T09:00:00Z")
    assert _send(google, 120.0, "2026-12-01T20:00:00Z")["alerted"]
    next_day = _send(google, 170.0, "2026-12-02T10:00:00Z")
    assert next_day["day"] == "2026-12-02"
    assert next_day["day_spend"] == 50.0 and not next_day["alerted"]
    assert _send(google, 230.0, "2026-12-02T20:00:00Z")["alerted"]
    assert [a["day"] for a in _events(capsys, main.EVENT_DAILY_LIMIT)] == [
        "2026-12-01",
        "2026-12-02",
    ]


def test_a_new_month_starts_again_from_zero(google):
    _send(google, 2900.0, "2026-12-31T20:00:00Z")
    january = _send(google, 20.0, "2027-01-01T09:00:00Z", interval="2027-01-01T08:00:00Z")
    assert january["day_spend"] == 20.0
    assert google.object(STATE)["interval"] == "2027-01-01T08:00:00Z"
    # December's last update, delivered late, does not take the state back a month.
    late = _send(
        google,
        3050.0,
        "2027-01-01T09:30:00Z",
        config=_config(kill_switch=True),
        actual=1.0,
    )
    assert "kill_switch" not in late  # last month's 100 % does not stop this month
    assert late["stale"]
    assert google.object(STATE)["interval"] == "2027-01-01T08:00:00Z"


def test_a_message_for_another_budget_is_ignored(google):
    summary = _send(google, 5000.0, "2026-12-01T20:00:00Z", budget="another-budget", actual=1.0)
    assert "ignored" in summary
    assert google.calls == []  # not even the state is read


def test_concurrent_deliveries_cannot_both_write_the_day(google):
    """GCS refuses a write whose ifGenerationMatch is stale (412): the loser retries."""
    _send(google, 10.0, "2026-12-01T09:00:00Z")
    google.objects[STATE] = (google.objects[STATE][0], 99)  # someone else wrote meanwhile
    clients = main.Clients.create(
        PROJECT, endpoint=google.endpoint, credentials=AnonymousCredentials()
    )
    run = main._Run(_config(), clients)
    raw, _ = run._read(f"{BUDGET}.json")
    with pytest.raises(google_errors.PreconditionFailed):
        run._write(f"{BUDGET}.json", raw or b"{}", 98)


# -- kill switch ---------------------------------------------------------------------------


def _training_capacity(google):
    template = f"projects/{PROJECT}/global/instanceTemplates/train-v1"
    google.templates[template] = TRAINING
    google.mig("zones/europe-west4-a", "train-zonal", 4, template)
    regional = f"projects/{PROJECT}/regions/europe-west4/instanceTemplates/train-r"
    google.templates[regional] = TRAINING
    # Declared with versions[] as gcp.TrainingPool's group is: no top-level template.
    google.mig("regions/europe-west4", "train-regional", 2, regional, in_versions=True)
    other = f"projects/{PROJECT}/global/instanceTemplates/serve"
    google.templates[other] = {"aistack-stack": STACK, "aistack-workload": "inference"}
    google.mig("zones/europe-west4-b", "serve", 3, other)
    google.node_pool(
        "gke-train",
        "europe-west4",
        "gpus",
        TRAINING,
        {"europe-west4-a": 2},
        autoscaling={"enabled": True, "minNodeCount": 0, "maxNodeCount": 8},
        accelerators=L4,
    )
    google.node_pool(
        "gke-train", "europe-west4", "system", {"aistack-stack": STACK}, {"europe-west4-a": 1}
    )


def _sizes(google):
    return {g["name"]: g["targetSize"] for groups in google.groups.values() for g in groups}


def test_the_kill_switch_scales_training_groups_and_node_pools_to_zero(google, capsys):
    _training_capacity(google)
    summary = _send(
        google, 3050.0, "2026-12-20T12:00:00Z", config=_config(kill_switch=True), actual=1.0
    )
    assert _sizes(google) == {
        "train-zonal": 0,
        "train-regional": 0,
        "serve": 3,  # inference is never touched
        "gke-gke-train-gpus-grp": 0,  # through GKE, not by resizing GKE's own group
        "gke-gke-train-system-grp": 1,
    }
    gpus = google.clusters[0]["nodePools"][0]
    # Off, or the autoscaler adds nodes back (proto3 JSON leaves `enabled: false` out).
    assert gpus["autoscaling"].get("enabled", False) is False
    paths = [path for _, path, _ in google.mutations()]
    assert not any("gke-gke-train-gpus-grp/resize" in path for path in paths)
    assert paths.index(next(p for p in paths if p.endswith(":setAutoscaling"))) < paths.index(
        next(p for p in paths if p.endswith(":setSize"))
    )
    previous = google.object("state/previous-sizes.json")
    pool = f"projects/{PROJECT}/locations/europe-west4/clusters/gke-train/nodePools/gpus"
    assert previous["node_pools"][pool]["zones"] == {"europe-west4-a": 2}
    assert previous["node_pools"][pool]["autoscaling"]["max_node_count"] == 8
    assert previous["instance_groups"] == {
        f"projects/{PROJECT}/zones/europe-west4-a/instanceGroupManagers/train-zonal": {
            "target_size": 4
        },
        f"projects/{PROJECT}/regions/europe-west4/instanceGroupManagers/train-regional": {
            "target_size": 2
        },
    }
    assert len(summary["kill_switch"]["instance_groups"]) == 2
    assert google.billing_account  # billing untouched without allow_disable_billing
    assert len(_events(capsys, main.EVENT_KILL_SWITCH)) == 1


def test_the_kill_switch_scales_the_training_pool_only_never_serving_or_system(google, capsys):
    """The cluster of stacks/kubernetes-gke: a system pool (e2, no GPU), an on-demand L4
    serving pool and a Spot L4 training pool. The system pool carries the labels aistack
    gave it before the system label existed (`aistack-workload: training`), and a serving
    MIG's template says training by mistake: neither is touched. The alert says what
    stopped."""
    google.node_pool(
        "gke-train",
        "europe-west4",
        "system",
        TRAINING,  # as labelled before gcp.GkeCluster wrote `system`
        {"europe-west4-a": 1},
        node_labels={"aistack.dev/pool": "system"},
    )
    google.node_pool(
        "gke-train",
        "europe-west4",
        "l4-serve",
        {"aistack-stack": STACK, "aistack-workload": "serving"},
        {"europe-west4-b": 2},
        accelerators=L4,
    )
    google.node_pool(
        "gke-train",
        "europe-west4",
        "l4-spot",
        TRAINING,
        {"europe-west4-c": 3},
        autoscaling={"enabled": True, "totalMinNodeCount": 0, "totalMaxNodeCount": 8},
        accelerators=L4,
    )
    serving = f"projects/{PROJECT}/regions/europe-west4/instanceTemplates/serve-blue"
    google.templates[serving] = {**TRAINING, "aistack-inference-tier": "serve"}
    google.mig("regions/europe-west4", "serve-blue", 2, serving)
    summary = _send(
        google, 3050.0, "2026-12-20T12:00:00Z", config=_config(kill_switch=True), actual=1.0
    )
    assert _sizes(google) == {
        "gke-gke-train-system-grp": 1,
        "gke-gke-train-l4-serve-grp": 2,
        "gke-gke-train-l4-spot-grp": 0,
        "serve-blue": 2,
    }
    scaled = [pool["name"].rsplit("/", 1)[-1] for pool in summary["kill_switch"]["node_pools"]]
    assert scaled == ["l4-spot"]
    assert summary["kill_switch"]["instance_groups"] == []
    paths = [path for _, path, _ in google.mutations()]
    assert not any("system" in path or "l4-serve" in path or "serve-blue" in path for path in paths)
    [acted] = _events(capsys, main.EVENT_KILL_SWITCH)
    assert acted["stopped"] == "node pool l4-spot"


def test_the_kill_switch_alert_lists_every_group_it_stopped(google, capsys):
    _training_capacity(google)
    _send(google, 3050.0, "2026-12-20T12:00:00Z", config=_config(kill_switch=True), actual=1.0)
    [acted] = _events(capsys, main.EVENT_KILL_SWITCH)
    stopped = acted["stopped"].split(", ")
    assert sorted(stopped) == [
        "instance group train-regional",
        "instance group train-zonal",
        "node pool gpus",
    ]


def test_the_kill_switch_acts_once_a_period_and_keeps_the_first_sizes(google):
    _training_capacity(google)
    config = _config(kill_switch=True)
    _send(google, 3050.0, "2026-12-20T12:00:00Z", config=config, actual=1.0)
    # A human restores a group; the next updates of the month leave it alone.
    google.groups["zones/europe-west4-a"][0]["targetSize"] = 4
    again = _send(google, 3100.0, "2026-12-20T18:00:00Z", config=config, actual=1.0)
    assert "kill_switch" not in again
    assert _sizes(google)["train-zonal"] == 4
    previous = google.object("state/previous-sizes.json")["instance_groups"]
    assert previous[
        f"projects/{PROJECT}/zones/europe-west4-a/instanceGroupManagers/train-zonal"
    ] == {"target_size": 4}


def test_forecasts_and_warnings_never_stop_training(google):
    _training_capacity(google)
    _send(google, 2500.0, "2026-12-20T12:00:00Z", config=_config(kill_switch=True), actual=0.8)
    assert google.mutations() == []


def test_a_failed_call_is_reported_and_the_rest_still_scaled(google, capsys):
    _training_capacity(google)
    google.failures[("POST", r"train-zonal/resize$")] = 500
    google.failures[("POST", r"nodePools/gpus:setAutoscaling$")] = 403
    # The first failure is re-raised (node pools go first), so Pub/Sub redelivers.
    with pytest.raises(google_errors.Forbidden):
        _send(google, 3050.0, "2026-12-20T12:00:00Z", config=_config(kill_switch=True), actual=1.0)
    sizes = _sizes(google)
    assert sizes["train-regional"] == 0  # scaled despite the other failures
    assert sizes["train-zonal"] == 4 and sizes["gke-gke-train-gpus-grp"] == 2
    failed = _events(capsys, main.EVENT_FAILED)
    assert any("train-zonal" in line["message"] and "500" in line["message"] for line in failed)
    assert any("gpus" in line["message"] and "403" in line["message"] for line in failed)
    assert all(line["severity"] == "ERROR" for line in failed)
    # Not marked done: the redelivery acts again, and now the calls succeed.
    google.failures.clear()
    _send(google, 3050.0, "2026-12-20T12:00:00Z", config=_config(kill_switch=True), actual=1.0)
    assert _sizes(google)["train-zonal"] == 0 and _sizes(google)["gke-gke-train-gpus-grp"] == 0


def test_an_old_failed_event_is_logged_and_not_retried_for_ever(google, capsys):
    google.failures[("GET", r"/download/storage/")] = 403
    clients = main.Clients.create(
        PROJECT, endpoint=google.endpoint, credentials=AnonymousCredentials()
    )
    summary = main.process(
        _update(10.0, "2026-12-01T09:00:00Z"),
        _config(),
        clients,
        now=datetime(2026, 12, 1, 12, 0, tzinfo=UTC),  # three hours later
    )
    assert summary["budget"] == BUDGET
    assert _events(capsys, main.EVENT_FAILED)


def test_a_group_with_an_autoscaler_is_reported_not_silently_left_running(google, capsys):
    template = f"projects/{PROJECT}/global/instanceTemplates/train-auto"
    google.templates[template] = TRAINING
    google.mig("zones/europe-west4-a", "train-auto", 3, template, autoscaler="train-as")
    with pytest.raises(RuntimeError, match="autoscaler"):
        _send(google, 3050.0, "2026-12-20T12:00:00Z", config=_config(kill_switch=True), actual=1.0)


def test_dry_run_changes_nothing(google):
    _training_capacity(google)
    summary = _send(
        google,
        3050.0,
        "2026-12-20T12:00:00Z",
        config=_config(kill_switch=True, dry_run=True),
        actual=1.0,
    )
    assert google.mutations() == []
    assert len(summary["kill_switch"]["instance_groups"]) == 2


def test_billing_is_disabled_only_when_allowed(google):
    _training_capacity(google)
    config = _config(kill_switch=True, allow_disable_billing=True)
    summary = _send(google, 3050.0, "2026-12-20T12:00:00Z", config=config, actual=1.0)
    assert summary["kill_switch"]["billing_disabled"]
    assert google.billing_account == ""


def test_the_environment_is_checked():
    env = {
        "AISTACK_PROJECT": PROJECT,
        "AISTACK_STACK": STACK,
        "AISTACK_BUDGET_ID": BUDGET,
        "AISTACK_STATE_BUCKET": "b",
        "AISTACK_DAILY_LIMIT": "100",
        "AISTACK_KILL_SWITCH": "true",
    }
    config = main.Config.from_env(env)
    assert config.kill_switch and not config.allow_disable_billing and not config.dry_run
    with pytest.raises(main.BudgetGuardConfigError, match="AISTACK_BUDGET_ID"):
        main.Config.from_env({"AISTACK_PROJECT": PROJECT})
    with pytest.raises(main.BudgetGuardConfigError, match="AISTACK_DRY_RUN"):
        main.Config.from_env({**env, "AISTACK_DRY_RUN": "maybe"})


#: The IAM permission each REST call needs, from Google's references: Cloud Storage IAM
#: permissions (media download: storage.objects.get; upload: storage.objects.create, and
#: storage.objects.delete when it replaces an object, i.e. ifGenerationMatch > 0);
#: Compute Engine IAM permissions (aggregatedList: instanceGroupManagers.list;
#: instanceTemplates.get for global and regional templates; resize:
#: instanceGroupManagers.update); GKE "API permissions" (clusters.list:
#: container.clusters.list; nodePools setSize / setAutoscaling: container.clusters.update;
#: operations.get: container.operations.get); Cloud Billing (updateBillingInfo with no
#: account: resourcemanager.projects.deleteBillingAssignment).
CALL_PERMISSIONS = [
    ("GET", r"^/download/storage/v1/b/[^/]+/o/", "storage.objects.get"),
    ("POST", r"^/upload/storage/v1/b/[^/]+/o$", "storage.objects.create"),
    ("GET", r"/aggregated/instanceGroupManagers$", "compute.instanceGroupManagers.list"),
    ("GET", r"/instanceTemplates/[^/]+$", "compute.instanceTemplates.get"),
    ("POST", r"/instanceGroupManagers/[^/]+/resize$", "compute.instanceGroupManagers.update"),
    ("GET", r"^/v1/projects/[^/]+/locations/-/clusters$", "container.clusters.list"),
    ("POST", r"/nodePools/[^/:]+:(setSize|setAutoscaling)$", "container.clusters.update"),
    ("GET", r"^/v1/projects/[^/]+/locations/[^/]+/operations/", "container.operations.get"),
    (
        "PUT",
        r"^/v1/projects/[^/]+/billingInfo$",
        "resourcemanager.projects.deleteBillingAssignment",
    ),
]


def _permissions_used(google):
    used = set()
    for method, path, query in google.requests:
        matches = [
            p for m, pattern, p in CALL_PERMISSIONS if m == method and re.search(pattern, path)
        ]
        assert matches, f"no permission known for {method} {path}"
        used.update(matches)
        if path.startswith("/upload/") and int(query.get("ifGenerationMatch", ["0"])[0]) > 0:
            used.add("storage.objects.delete")
    return used


def test_the_calls_made_need_exactly_the_declared_permissions(google):
    _training_capacity(google)
    config = _config(kill_switch=True, allow_disable_billing=True)
    _send(google, 3050.0, "2026-12-20T12:00:00Z", config=config, actual=1.0)
    declared = {p for scope in main.PERMISSIONS.values() for p in scope}
    assert _permissions_used(google) == declared


def test_the_daily_alert_alone_needs_only_the_state_permissions(google):
    _send(google, 10.0, "2026-12-01T09:00:00Z")
    _send(google, 120.0, "2026-12-01T20:00:00Z")
    assert _permissions_used(google) == set(main.PERMISSIONS["state"])


def test_the_entry_point_reads_its_environment_and_the_cloud_event(google, monkeypatch, capsys):
    env = {
        "AISTACK_PROJECT": PROJECT,
        "AISTACK_STACK": STACK,
        "AISTACK_BUDGET_ID": BUDGET,
        "AISTACK_STATE_BUCKET": "guard-state",
        "AISTACK_DAILY_LIMIT": "100",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    clients = main.Clients.create(
        PROJECT, endpoint=google.endpoint, credentials=AnonymousCredentials()
    )
    monkeypatch.setattr(main.Clients, "create", classmethod(lambda cls, project: clients))

    now = datetime.now(UTC)
    month = now.replace(hour=0, minute=0, second=0, microsecond=0)  # first day: from 0

    class CloudEvent:  # what functions-framework passes: `.data` is the Pub/Sub envelope
        data = _update(
            150.0,
            now.isoformat().replace("+00:00", "Z"),
            interval=month.isoformat().replace("+00:00", "Z"),
        )

    main.handle_budget_update(CloudEvent())
    assert len(_events(capsys, main.EVENT_DAILY_LIMIT)) == 1
