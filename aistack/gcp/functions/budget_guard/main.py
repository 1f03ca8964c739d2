"""Budget guard: daily spend alerts and an opt-in kill switch, from a budget's Pub/Sub updates.

Google Cloud has no daily budget: a budget's period is a month, quarter or year. What it
does send, to the Pub/Sub topic of its `all_updates_rule`, is an update "multiple times
per day" carrying the period's *cumulative* cost so far (Cloud Billing docs, "Set up
programmatic notifications": attributes `billingAccountId`, `budgetId`, `schemaVersion`
1.0; data `budgetDisplayName`, `costAmount`, `costIntervalStart`, `budgetAmount`,
`currencyCode`, and `alertThresholdExceeded` / `forecastThresholdExceeded` once a threshold
is crossed). This Cloud Functions (2nd gen) function, triggered by those messages:

* keeps the day's spend from successive `costAmount` values, in one small JSON object in
  Cloud Storage: the last cumulative cost seen before the day began is the day's start,
  so a repeated or re-delivered message (same `costAmount`) adds nothing, and an older
  message arriving late (a smaller `costAmount`) is ignored;
* logs one ERROR-level structured entry (`aistack_event: daily_limit_exceeded`) the first
  time a day's spend reaches the daily limit, and no more that day; a log-based alert
  policy turns it into an e-mail. Days start at the time of day the budget's month does
  (`costIntervalStart`: midnight US Pacific), so a day lines up with the month's days;
* with the kill switch on, when the budget's ACTUAL spend crosses 100 %
  (`alertThresholdExceeded` >= 1.0; forecasts never act), scales to zero the stack's
  training capacity: GKE node pools and managed instance groups whose labels say
  `aistack-stack=<AISTACK_STACK>` **and** `aistack-workload=training` (node pools: the
  pool's `resource_labels`; MIGs: their instance template's labels). Defence in depth, as
  a mislabelled pool would take inference or the cluster down with it: a node pool with no
  GPU accelerator, or whose labels or nodes say `system`, is never scaled (the cluster's
  system pool runs kube-dns, the metrics agents and the controllers), nor is a MIG whose
  template says it serves (`aistack-inference-tier`, or a serving workload). Their previous
  sizes go to `previous-sizes.json` beside the state first (never overwritten), so a human
  can restore them. Once per budget period, like the AWS kill switch's single 100 % alert.
  The ERROR entry it logs carries `stopped` (what was scaled to zero, in words), which the
  kill-switch alert policy puts in its e-mail;
* only with `AISTACK_ALLOW_DISABLE_BILLING=true`, then also detaches the project from its
  billing account, which stops every paid service in the project and can lose data.

A message for another budget is ignored. A failed call is logged (ERROR, `aistack_event:
budget_guard_failed`), the remaining resources are still handled, then the first error is
re-raised so that Pub/Sub redelivers the event (the trigger retries); an event older than
`AISTACK_MAX_EVENT_AGE_SECONDS` is not retried any more (Cloud Functions docs, "Retry
event-driven functions": give retries an end condition), as the next budget update comes
within hours anyway and carries the cumulative cost.

Environment: AISTACK_PROJECT, AISTACK_STACK, AISTACK_BUDGET_ID, AISTACK_STATE_BUCKET,
AISTACK_DAILY_LIMIT (currency units) are required; AISTACK_KILL_SWITCH, AISTACK_DRY_RUN,
AISTACK_ALLOW_DISABLE_BILLING ("true"/"false"), AISTACK_STATE_PREFIX,
AISTACK_MAX_EVENT_AGE_SECONDS are optional.

Deployed alone as the function's source, with requirements.txt: it must not import aistack.
`PERMISSIONS` lists every IAM permission the calls below need; the component builds the
function's custom roles from it, so the two cannot drift.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from google.api_core import exceptions as google_errors
from google.auth.credentials import Credentials
from google.cloud import compute_v1, container_v1, storage  # type: ignore[attr-defined]

try:  # Provided by the Cloud Functions Python runtime; absent in aistack's own tests.
    import functions_framework  # type: ignore[import-not-found]

    _cloud_event: Callable[[Callable[..., Any]], Callable[..., Any]] = (
        functions_framework.cloud_event
    )
except ImportError:  # pragma: no cover - depends on the environment

    def _cloud_event(function: Callable[..., Any]) -> Callable[..., Any]:
        return function


__all__ = [
    "EVENT_DAILY_LIMIT",
    "EVENT_FAILED",
    "EVENT_KILL_SWITCH",
    "PERMISSIONS",
    "POOL_NODE_LABEL",
    "PROTECTED_WORKLOADS",
    "SERVING_LABELS",
    "STACK_LABEL",
    "SYSTEM_POOL",
    "WORKLOAD_LABEL",
    "Clients",
    "Config",
    "handle_budget_update",
    "process",
]

# These mirror aistack's GCP labels (gcp_label of aistack.config.STACK_TAG / WORKLOAD_TAG).
# This file cannot import aistack because it is deployed alone: keep them in step by hand.
STACK_LABEL = "aistack-stack"
WORKLOAD_LABEL = "aistack-workload"
TRAINING_WORKLOAD = "training"
#: Workloads never stopped, whatever else a resource's labels say: the GKE cluster's system
#: pool (gcp.GkeCluster labels it `system`), serving node pools (gcp.GpuNodePool
#: `workload: serving`) and serving MIGs (gcp.InferenceTier labels them `inference`).
PROTECTED_WORKLOADS = ("system", "serving", "inference")
#: gcp.InferenceTier labels every serving template with its tier: such a group serves.
SERVING_LABELS = ("aistack-inference-tier",)
#: The Kubernetes node label naming a node's pool (aistack.contracts.k8s.POOL_LABEL), and
#: the value the cluster's system pool carries.
POOL_NODE_LABEL = "aistack.dev/pool"
SYSTEM_POOL = "system"
#: GKE labels the instance templates of its node pools' MIGs with this key: those groups
#: belong to a node pool, which the kill switch scales through GKE, never directly.
GKE_NODE_LABEL = "goog-gke-node"

EVENT_DAILY_LIMIT = "daily_limit_exceeded"
EVENT_KILL_SWITCH = "kill_switch_acted"
EVENT_FAILED = "budget_guard_failed"

#: Every IAM permission the function's calls need, by where it is granted. Sources: Cloud
#: Storage IAM permissions (an upload that replaces an object needs
#: storage.objects.delete too); Compute Engine IAM permissions (aggregatedList needs
#: `list`, resize needs `update`; regional instance templates are read with
#: compute.instanceTemplates.get too); GKE "API permissions" reference (clusters.list
#: needs container.clusters.list and returns each cluster's node pools, so no
#: container.clusters.get is called; a node pool is resized, or its autoscaling changed,
#: with container.clusters.update on the cluster: there is no container.nodePools.*
#: permission; waiting on the returned operation needs container.operations.get); Cloud
#: Billing: projects.updateBillingInfo with an empty account needs
#: resourcemanager.projects.deleteBillingAssignment on the project.
PERMISSIONS: dict[str, tuple[str, ...]] = {
    # On the state bucket, under the state prefix only.
    "state": ("storage.objects.create", "storage.objects.delete", "storage.objects.get"),
    # On the project, with the kill switch.
    "kill_switch": (
        "compute.instanceGroupManagers.list",
        "compute.instanceGroupManagers.update",
        "compute.instanceTemplates.get",
        "container.clusters.list",
        "container.clusters.update",
        "container.operations.get",
    ),
    # On the project, only with allow_disable_billing.
    "disable_billing": ("resourcemanager.projects.deleteBillingAssignment",),
}

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off", ""})
_BILLING_API = "https://cloudbilling.googleapis.com"
_OPERATION_TIMEOUT_SECONDS = 240.0
#: The `stopped` text is one line of an e-mail, through a label extractor: kept short (the
#: limit Cloud Monitoring puts on an extracted value was not found in its docs).
_STOPPED_TEXT_LIMIT = 900
_POLL_SECONDS = 2.0

logger = logging.getLogger(__name__)


class BudgetGuardConfigError(RuntimeError):
    """The function's environment is wrong, so it refuses to act."""


def _flag(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise BudgetGuardConfigError(f"{name}={env[name]!r} is neither 'true' nor 'false'.")


@dataclass(frozen=True)
class Config:
    project: str
    stack: str
    budget_id: str
    state_bucket: str
    daily_limit: float
    kill_switch: bool = False
    dry_run: bool = False
    allow_disable_billing: bool = False
    state_prefix: str = "state/"
    #: Retry a failed event for this long after it was published, then stop.
    max_event_age_seconds: int = 3600
    #: ACTUAL spend, as a fraction of the budget, at which the kill switch acts.
    kill_threshold: float = 1.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        required = (
            "AISTACK_PROJECT",
            "AISTACK_STACK",
            "AISTACK_BUDGET_ID",
            "AISTACK_STATE_BUCKET",
            "AISTACK_DAILY_LIMIT",
        )
        missing = [name for name in required if not env.get(name, "").strip()]
        if missing:
            raise BudgetGuardConfigError(
                f"{', '.join(missing)} not set: the budget guard does not know what to watch."
            )
        try:
            daily_limit = float(env["AISTACK_DAILY_LIMIT"])
            max_age = int(env.get("AISTACK_MAX_EVENT_AGE_SECONDS") or 3600)
        except ValueError as error:
            raise BudgetGuardConfigError(f"not a number: {error}") from error
        return cls(
            project=env["AISTACK_PROJECT"].strip(),
            stack=env["AISTACK_STACK"].strip(),
            budget_id=env["AISTACK_BUDGET_ID"].strip(),
            state_bucket=env["AISTACK_STATE_BUCKET"].strip(),
            daily_limit=daily_limit,
            kill_switch=_flag(env, "AISTACK_KILL_SWITCH"),
            dry_run=_flag(env, "AISTACK_DRY_RUN"),
            allow_disable_billing=_flag(env, "AISTACK_ALLOW_DISABLE_BILLING"),
            state_prefix=env.get("AISTACK_STATE_PREFIX") or "state/",
            max_event_age_seconds=max_age,
        )


@dataclass
class Clients:
    """The Google API clients the function calls; `endpoint` points all of them at one
    host (tests answer there), default: Google's."""

    storage: storage.Client
    clusters: container_v1.ClusterManagerClient
    zonal_groups: compute_v1.InstanceGroupManagersClient
    regional_groups: compute_v1.RegionInstanceGroupManagersClient
    templates: compute_v1.InstanceTemplatesClient
    regional_templates: compute_v1.RegionInstanceTemplatesClient
    billing: Any
    billing_endpoint: str

    @classmethod
    def create(
        cls,
        project: str,
        *,
        endpoint: str | None = None,
        credentials: Credentials | None = None,
    ) -> Clients:
        from google.auth.transport.requests import AuthorizedSession

        if credentials is None:
            import google.auth

            credentials, _ = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
        options = {"api_endpoint": endpoint} if endpoint else None
        rest: dict[str, Any] = {
            "credentials": credentials,
            "transport": "rest",
            "client_options": options,
        }
        return cls(
            storage=storage.Client(
                project=project, credentials=credentials, client_options=options
            ),
            clusters=container_v1.ClusterManagerClient(**rest),
            zonal_groups=compute_v1.InstanceGroupManagersClient(**rest),
            regional_groups=compute_v1.RegionInstanceGroupManagersClient(**rest),
            templates=compute_v1.InstanceTemplatesClient(**rest),
            regional_templates=compute_v1.RegionInstanceTemplatesClient(**rest),
            billing=AuthorizedSession(credentials),
            billing_endpoint=endpoint or _BILLING_API,
        )


# -- the entry point ---------------------------------------------------------------------


@_cloud_event
def handle_budget_update(cloud_event: Any) -> None:
    """Cloud Functions entry point for `google.cloud.pubsub.topic.v1.messagePublished`."""
    config = Config.from_env()
    process(cloud_event.data, config, Clients.create(config.project))


def process(
    event_data: Mapping[str, Any],
    config: Config,
    clients: Clients,
    *,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Handle one budget update (the CloudEvent's `data`); a JSON-serialisable summary."""
    now = now or datetime.now(UTC)
    message = event_data.get("message") or {}
    attributes = message.get("attributes") or {}
    if attributes.get("budgetId") != config.budget_id:
        summary = {"ignored": f"budget {attributes.get('budgetId')!r} is not this guard's"}
        _log("INFO", "ignored an update for another budget", **summary)
        return summary
    update = json.loads(base64.b64decode(message.get("data") or b"e30=") or b"{}")
    published = _timestamp(message.get("publishTime")) or now
    run = _Run(config, clients)
    try:
        summary = run.handle(update, published)
    except google_errors.GoogleAPICallError as error:
        # The state could not be read or written (412: another delivery won the race).
        run.failed("keep the day's spend in the state object", error)
        summary = {"stack": config.stack, "budget": config.budget_id}
    failures = run.failures
    if failures:
        age = (now - published).total_seconds()
        retry = age <= config.max_event_age_seconds
        _log(
            "ERROR",
            f"budget guard: {len(failures)} call(s) failed; "
            + ("Pub/Sub will redeliver the event" if retry else "too old to retry, dropped"),
            aistack_event=EVENT_FAILED,
            stack=config.stack,
            failures=[f"{what}: {error}" for what, error in failures],
        )
        if retry:
            raise failures[0][1]
    return summary


# -- one run -----------------------------------------------------------------------------


@dataclass
class _State:
    interval: str = ""
    day: str = ""
    day_start_cost: float = 0.0
    last_cost: float = 0.0
    alerted_day: str = ""
    killed_interval: str = ""

    @classmethod
    def parse(cls, raw: bytes | None) -> _State:
        if not raw:
            return cls()
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in json.loads(raw).items() if k in known})

    def dump(self) -> bytes:
        return json.dumps(self.__dict__, sort_keys=True).encode()


@dataclass
class _Run:
    config: Config
    clients: Clients
    failures: list[tuple[str, Exception]] = field(default_factory=list)

    def failed(self, what: str, error: Exception) -> None:
        self.failures.append((what, error))
        _log("ERROR", f"failed to {what}: {error}", aistack_event=EVENT_FAILED)

    # The state object: read with its generation, written only if nobody wrote since
    # (ifGenerationMatch; 0 = must not exist yet), so two concurrent deliveries cannot
    # both count a day. The loser fails with 412 and is redelivered.
    def _blob(self, name: str) -> storage.Blob:
        bucket = self.clients.storage.bucket(self.config.state_bucket)
        return bucket.blob(f"{self.config.state_prefix}{name}")

    def _read(self, name: str) -> tuple[bytes | None, int]:
        blob = self._blob(name)
        try:
            data = blob.download_as_bytes()
        except google_errors.NotFound:
            return None, 0
        return data, int(blob.generation or 0)

    def _write(self, name: str, data: bytes, generation: int) -> int:
        blob = self._blob(name)
        blob.upload_from_string(
            data, content_type="application/json", if_generation_match=generation
        )
        return int(blob.generation or 0)

    def handle(self, update: Mapping[str, Any], published: datetime) -> dict[str, Any]:
        config = self.config
        cost = float(update.get("costAmount") or 0.0)
        interval = str(update.get("costIntervalStart") or "")
        state_name = f"{config.budget_id}.json"
        raw, generation = self._read(state_name)
        state = _State.parse(raw)
        day = _day(published, interval)
        summary: dict[str, Any] = {
            "stack": config.stack,
            "budget": config.budget_id,
            "cost": cost,
            "interval": interval,
            "day": day,
        }

        changed = True
        past_period = bool(state.interval) and interval < state.interval
        if past_period:
            # An update of the previous period delivered late (RFC 3339 UTC timestamps
            # order as strings): that period is over.
            summary["stale"] = True
            changed = False
        elif state.interval != interval:
            # A new budget period (or the first update ever). Its first day starts at 0;
            # when the guard first hears mid-period, the day is counted from now on.
            first_day = day == _day(_timestamp(interval) or published, interval)
            start = 0.0 if first_day else cost
            state = _State(interval=interval, day=day, day_start_cost=start, last_cost=cost)
        elif cost < state.last_cost:
            summary["stale"] = True  # an older update delivered late: the total only grows
            changed = False
        elif day != state.day:
            # Spend since the last update of yesterday is counted today: updates are hours
            # apart and the costs themselves lag by hours.
            state.day, state.day_start_cost, state.last_cost = day, state.last_cost, cost
        elif cost == state.last_cost:
            summary["duplicate"] = True  # nothing new: redelivery or an unchanged total
            changed = False
        else:
            state.last_cost = cost

        day_spend = round(state.last_cost - state.day_start_cost, 6)
        summary["day_spend"] = day_spend
        alert = day_spend >= config.daily_limit and state.alerted_day != state.day
        if alert:
            state.alerted_day = state.day
            changed = True
        if changed:
            # Written before the alert is logged: a redelivery after a failed write alerts
            # again, a redelivery after a successful one never does.
            generation = self._write(state_name, state.dump(), generation)
        if alert:
            _log(
                "ERROR",
                f"stack {config.stack}: {day_spend:g} spent on {state.day}, at or above the "
                f"daily limit of {config.daily_limit:g}",
                aistack_event=EVENT_DAILY_LIMIT,
                stack=config.stack,
                day=state.day,
                day_spend=day_spend,
                daily_limit=config.daily_limit,
                currency=update.get("currencyCode", ""),
            )
        summary["alerted"] = alert

        actual = update.get("alertThresholdExceeded")
        crossed = actual is not None and float(actual) >= config.kill_threshold
        if config.kill_switch and crossed and not past_period and state.killed_interval != interval:
            summary["kill_switch"] = _KillSwitch(self).run()
            if not self.failures and not config.dry_run:
                state.killed_interval = interval
                self._write(state_name, state.dump(), generation)
        _log("INFO", "budget update handled", **summary)
        return summary


# -- kill switch -------------------------------------------------------------------------


class _KillSwitch:
    def __init__(self, run: _Run) -> None:
        self.run_ = run
        self.config = run.config
        self.clients = run.clients
        self.summary: dict[str, Any] = {
            "dry_run": self.config.dry_run,
            "node_pools": [],
            "instance_groups": [],
            "unchanged": [],
            "billing_disabled": False,
        }
        self.previous: dict[str, dict[str, Any]] = {"node_pools": {}, "instance_groups": {}}

    def run(self) -> dict[str, Any]:
        groups = self._groups()
        pools = self._node_pools(groups)
        gke_owned = {url for pool in pools for url in pool["group_urls"]}
        own_groups = [g for g in groups if _short(g.self_link) not in gke_owned]
        matched_groups = self._training_groups(own_groups)
        self._remember(pools, matched_groups)
        for pool in pools:
            self._scale_pool(pool)
        for group in matched_groups:
            self._scale_group(group)
        if self.config.allow_disable_billing:
            self._disable_billing()
        if not self.config.dry_run:
            _log(
                "ERROR",
                f"budget kill switch scaled stack {self.config.stack}'s training capacity "
                f"to zero ({len(self.run_.failures)} failure(s))",
                aistack_event=EVENT_KILL_SWITCH,
                stopped=self.stopped_text(),
                **self.summary,
            )
        return self.summary

    def stopped_text(self) -> str:
        """What was scaled to zero, in words, short enough for an alert's extracted label:
        the kill-switch alert's e-mail quotes it."""
        names = [f"node pool {p['name'].rsplit('/', 1)[-1]}" for p in self.summary["node_pools"]]
        names += [
            f"instance group {g['name'].rsplit('/', 1)[-1]}"
            for g in self.summary["instance_groups"]
        ]
        if self.summary["billing_disabled"]:
            names.append(f"billing of project {self.config.project}")
        text = ", ".join(names) or "nothing (no training capacity was running)"
        if len(text) > _STOPPED_TEXT_LIMIT:
            text = text[: _STOPPED_TEXT_LIMIT - 20].rsplit(", ", 1)[0] + ", ... (see the log)"
        return text

    def _ours(self, labels: Mapping[str, str]) -> bool:
        return (
            labels.get(STACK_LABEL) == self.config.stack
            and labels.get(WORKLOAD_LABEL) == TRAINING_WORKLOAD
        )

    def _training_pool(self, pool: container_v1.NodePool) -> bool:
        """A node pool the kill switch may scale: labelled as the stack's training, with
        GPUs (`config.accelerators`; GKE lists them for every GPU pool, G2 included), and
        nothing on it saying it is the system pool or serves."""
        config = pool.config
        labels = dict(config.resource_labels)
        if not self._ours(labels) or not list(config.accelerators):
            return False
        nodes = dict(config.labels)
        return (
            labels.get(WORKLOAD_LABEL) not in PROTECTED_WORKLOADS
            and nodes.get(POOL_NODE_LABEL) != SYSTEM_POOL
            and pool.name != SYSTEM_POOL
        )

    def _training_group(self, labels: Mapping[str, str]) -> bool:
        """A MIG the kill switch may resize, by its template's labels: the stack's
        training, not a node pool's group (scaled through GKE) and not a serving one."""
        return (
            self._ours(labels)
            and GKE_NODE_LABEL not in labels
            and not any(label in labels for label in SERVING_LABELS)
        )

    # Discovery ------------------------------------------------------------------------

    def _groups(self) -> list[compute_v1.InstanceGroupManager]:
        found: list[compute_v1.InstanceGroupManager] = []
        try:
            for _, scoped in self.clients.zonal_groups.aggregated_list(project=self.config.project):
                found.extend(scoped.instance_group_managers)
        except google_errors.GoogleAPICallError as error:
            self.run_.failed("list managed instance groups", error)
        return found

    def _node_pools(self, groups: list[compute_v1.InstanceGroupManager]) -> list[dict[str, Any]]:
        sizes = {_short(g.self_link): int(g.target_size) for g in groups}
        pools: list[dict[str, Any]] = []
        try:
            clusters = self.clients.clusters.list_clusters(
                parent=f"projects/{self.config.project}/locations/-"
            ).clusters
        except google_errors.GoogleAPICallError as error:
            self.run_.failed("list GKE clusters", error)
            return pools
        for cluster in clusters:
            parent = f"projects/{self.config.project}/locations/{cluster.location}/clusters/"
            parent += cluster.name
            for pool in cluster.node_pools:
                if not self._training_pool(pool):
                    continue
                group_urls = [_short(url) for url in pool.instance_group_urls]
                autoscaling = pool.autoscaling
                pools.append(
                    {
                        "name": f"{parent}/nodePools/{pool.name}",
                        "group_urls": group_urls,
                        "zones": {_zone_of(url): sizes.get(url) for url in group_urls},
                        "autoscaling": (
                            {
                                "min_node_count": autoscaling.min_node_count,
                                "max_node_count": autoscaling.max_node_count,
                                "total_min_node_count": autoscaling.total_min_node_count,
                                "total_max_node_count": autoscaling.total_max_node_count,
                                "location_policy": (
                                    autoscaling.location_policy.name
                                    if autoscaling.location_policy
                                    else None
                                ),
                            }
                            if autoscaling.enabled
                            else None
                        ),
                        "location": cluster.location,
                    }
                )
        return pools

    def _training_groups(
        self, groups: list[compute_v1.InstanceGroupManager]
    ) -> list[compute_v1.InstanceGroupManager]:
        matched = []
        labels_of: dict[str, dict[str, str]] = {}
        for group in groups:
            template = _template_of(group)
            if not template:
                self.run_.failed(
                    f"read the instance template of group {group.name}",
                    ValueError("the group names no template, at the top or in versions[]"),
                )
                continue
            if template not in labels_of:
                try:
                    labels_of[template] = self._template_labels(template)
                except google_errors.GoogleAPICallError as error:
                    self.run_.failed(f"read instance template {template}", error)
                    continue
            # GKE's own groups (goog-gke-node) belong to node pools, of this stack or not.
            if self._training_group(labels_of[template]):
                matched.append(group)
        return matched

    def _template_labels(self, url: str) -> dict[str, str]:
        parts = _short(url).split("/")
        if "regions" in parts:
            region = parts[parts.index("regions") + 1]
            template = self.clients.regional_templates.get(
                project=self.config.project, region=region, instance_template=parts[-1]
            )
        else:
            template = self.clients.templates.get(
                project=self.config.project, instance_template=parts[-1]
            )
        return dict(template.properties.labels)

    # Previous sizes -------------------------------------------------------------------

    def _remember(
        self, pools: list[dict[str, Any]], groups: list[compute_v1.InstanceGroupManager]
    ) -> None:
        for pool in pools:
            if any(pool["zones"].values()) or pool["autoscaling"]:
                self.previous["node_pools"][pool["name"]] = {
                    "zones": pool["zones"],
                    "autoscaling": pool["autoscaling"],
                }
        for group in groups:
            if group.target_size:
                self.previous["instance_groups"][_short(group.self_link)] = {
                    "target_size": int(group.target_size)
                }
        # In the log too, whatever happens to the object below.
        _log("INFO", "sizes before the kill switch", stack=self.config.stack, **self.previous)
        if self.config.dry_run:
            return
        try:
            raw, generation = self.run_._read("previous-sizes.json")
            kept = json.loads(raw) if raw else {"node_pools": {}, "instance_groups": {}}
            # First sizes win: a later run sees zeros, which must not replace them.
            for section, entries in self.previous.items():
                for key, value in entries.items():
                    kept.setdefault(section, {}).setdefault(key, value)
            data = json.dumps(kept, sort_keys=True, indent=1).encode()
            self.run_._write("previous-sizes.json", data, generation)
        except google_errors.GoogleAPICallError as error:
            # Still scale: the sizes are in the log line above, the money is now.
            self.run_.failed("record the previous sizes", error)

    # Acting ---------------------------------------------------------------------------

    def _scale_pool(self, pool: dict[str, Any]) -> None:
        name = pool["name"]
        if pool["autoscaling"] is None and not any(pool["zones"].values()):
            self.summary["unchanged"].append({"node_pool": name, "reason": "already at zero"})
            return
        if not self.config.dry_run:
            try:
                clusters = self.clients.clusters
                if pool["autoscaling"] is not None:
                    # The cluster autoscaler would add nodes back: switch it off first.
                    # GKE runs one operation per cluster at a time, so wait for each.
                    self._wait(
                        pool["location"],
                        clusters.set_node_pool_autoscaling(
                            request=container_v1.SetNodePoolAutoscalingRequest(
                                name=name,
                                autoscaling=container_v1.NodePoolAutoscaling(enabled=False),
                            )
                        ),
                    )
                resize = container_v1.SetNodePoolSizeRequest(name=name, node_count=0)
                self._wait(pool["location"], clusters.set_node_pool_size(request=resize))
            except (google_errors.GoogleAPICallError, TimeoutError) as error:
                self.run_.failed(f"scale node pool {name} to zero", error)
                return
        self.summary["node_pools"].append(
            {"name": name, "previous": self.previous["node_pools"].get(name)}
        )

    def _wait(self, location: str, operation: container_v1.Operation) -> None:
        deadline = time.monotonic() + _OPERATION_TIMEOUT_SECONDS
        name = f"projects/{self.config.project}/locations/{location}/operations/{operation.name}"
        while operation.status != container_v1.Operation.Status.DONE:
            if time.monotonic() > deadline:
                raise TimeoutError(f"GKE operation {name} still running")
            time.sleep(_POLL_SECONDS)
            operation = self.clients.clusters.get_operation(
                request=container_v1.GetOperationRequest(name=name)
            )
        if operation.error.message:
            raise RuntimeError(f"GKE operation {name} failed: {operation.error.message}")

    def _scale_group(self, group: compute_v1.InstanceGroupManager) -> None:
        link = _short(group.self_link)
        if group.status.autoscaler:
            # An autoscaler would resize the group straight back: refuse loudly.
            self.run_.failed(
                f"scale instance group {link} to zero",
                RuntimeError(f"it has an autoscaler ({group.status.autoscaler})"),
            )
            return
        if not group.target_size:
            self.summary["unchanged"].append({"instance_group": link, "reason": "already 0"})
            return
        if not self.config.dry_run:
            try:
                parts = link.split("/")
                if "zones" in parts:
                    self.clients.zonal_groups.resize_unary(
                        project=self.config.project,
                        zone=parts[parts.index("zones") + 1],
                        instance_group_manager=group.name,
                        size=0,
                    )
                else:
                    self.clients.regional_groups.resize_unary(
                        project=self.config.project,
                        region=parts[parts.index("regions") + 1],
                        instance_group_manager=group.name,
                        size=0,
                    )
            except google_errors.GoogleAPICallError as error:
                self.run_.failed(f"scale instance group {link} to zero", error)
                return
        self.summary["instance_groups"].append(
            {"name": link, "previous": {"target_size": int(group.target_size)}}
        )

    def _disable_billing(self) -> None:
        if self.config.dry_run:
            return
        url = f"{self.clients.billing_endpoint}/v1/projects/{self.config.project}/billingInfo"
        try:
            response = self.clients.billing.put(url, json={"billingAccountName": ""}, timeout=60)
            if response.status_code >= 400:
                raise google_errors.from_http_response(response)
        except google_errors.GoogleAPICallError as error:
            self.run_.failed("disable billing on the project", error)
            return
        self.summary["billing_disabled"] = True


# -- helpers -----------------------------------------------------------------------------


def _timestamp(text: Any) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


def _day(moment: datetime, interval_start: str) -> str:
    """The budget day `moment` falls in: days begin at the time of day the period does."""
    start = _timestamp(interval_start)
    offset = timedelta(0)
    if start is not None:
        offset = timedelta(hours=start.hour, minutes=start.minute, seconds=start.second)
    return (moment - offset).date().isoformat()


def _short(url: str) -> str:
    """`https://www.googleapis.com/compute/v1/projects/p/zones/z/...` -> `projects/p/...`."""
    marker = url.find("projects/")
    return url[marker:] if marker >= 0 else url


def _zone_of(url: str) -> str:
    parts = url.split("/")
    for scope in ("zones", "regions"):
        if scope in parts:
            return parts[parts.index(scope) + 1]
    return ""


def _log(severity: str, message: str, **fields: Any) -> None:
    """One structured entry: Cloud Run's logging agent reads a JSON line on stdout as a
    LogEntry, `severity` and `message` as its own fields, the rest as jsonPayload (Cloud
    Logging docs, "Structured logging")."""
    entry = {"severity": severity, "message": message, **fields}
    print(json.dumps(entry, default=str, sort_keys=True), file=sys.stdout, flush=True)
    logger.log(logging.ERROR if severity == "ERROR" else logging.INFO, message)


def _template_of(group: compute_v1.InstanceGroupManager) -> str:
    """The template a group creates its VMs from. A group declared with `versions[]`
    names its templates there (Compute Engine v1 InstanceGroupManager: `versions[]`
    "Specifies the instance templates used by this managed instance group to create
    instances"; the top-level `instanceTemplate` is the single-template form), so the
    top-level field may be empty: read the first version's then."""
    if group.instance_template:
        return str(group.instance_template)
    for version in group.versions:
        if version.instance_template:
            return str(version.instance_template)
    return ""
