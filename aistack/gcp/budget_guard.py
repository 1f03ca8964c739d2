"""`gcp.BudgetGuard`: a stack's budget on Google Cloud, with daily alerts and a kill switch.

The Google Cloud counterpart of `aws.BudgetGuard` (checklist C3), with its promises:

* a monthly budget on the stack's project, gross of credits, alerting on ACTUAL spend at
  50/80/100 % and on the FORECAST at 100 %, to the team's e-mail addresses (Cloud
  Monitoring e-mail channels) and to a Pub/Sub topic;
* a daily alert. Google Cloud has no daily budget (`budget_filter.calendar_period` is MONTH,
  QUARTER or YEAR), so a Cloud Functions (2nd gen) function reads the budget's updates from
  the topic (several a day, each with the month's cumulative cost), keeps the day's spend
  in a small Cloud Storage object, and logs one ERROR entry the first time a day reaches
  the daily limit; a log-based alert policy mails it;
* optionally (`kill_switch`), the same function scales the stack's training node pools and
  managed instance groups to zero when ACTUAL spend reaches 100 %, and only then,
  remembering their sizes; detaching billing only with `allow_disable_billing`.

The function runs as its own service account whose custom roles hold exactly the
permissions its code calls (read from the code). Why each setting:
docs/components/gcp/budget-guard.md.
"""

from __future__ import annotations

import hashlib
import math
import re
import warnings

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator
from pydantic.alias_generators import to_camel

from aistack.config import STACK_TAG, AistackModel, Governance, gcp_label
from aistack.errors import Problems
from aistack.gcp._base import child_opts, labels_for, stack_id
from aistack.gcp.dataset_bucket import DatasetBucket
from aistack.gcp.functions import BUDGET_GUARD_SOURCE, budget_guard_permissions
from aistack.gcp.project_services import ProjectServices

with warnings.catch_warnings():
    # As in aistack.gcp._base: loading pulumi_gcp.monitoring warns about a deprecated
    # function (getSecretVersion) aistack never calls.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulumi_gcp(\.|$)")
    _ = gcp.monitoring.AlertPolicy

__all__ = [
    "BudgetGuard",
    "BudgetGuardArgs",
    "FUNCTION_EVENT",
    "BUDGET_APIS",
    "FUNCTION_APIS",
]

BILLING_BUDGETS_API = "billingbudgets.googleapis.com"
PUBSUB_API = "pubsub.googleapis.com"
MONITORING_API = "monitoring.googleapis.com"
STORAGE_API = "storage.googleapis.com"
IAM_API = "iam.googleapis.com"
FUNCTIONS_API = "cloudfunctions.googleapis.com"
RUN_API = "run.googleapis.com"
EVENTARC_API = "eventarc.googleapis.com"
CLOUDBUILD_API = "cloudbuild.googleapis.com"
ARTIFACTREGISTRY_API = "artifactregistry.googleapis.com"
#: The budget, its topic and its e-mail channels.
BUDGET_APIS = (BILLING_BUDGETS_API, PUBSUB_API, MONITORING_API)
#: The daily-alert function: Cloud Functions gen2 builds with Cloud Build into Artifact
#: Registry and runs on Cloud Run behind an Eventarc trigger (Cloud Functions docs,
#: "Enable the APIs": cloudfunctions, cloudbuild, artifactregistry, run, eventarc, pubsub).
FUNCTION_APIS = (
    FUNCTIONS_API,
    RUN_API,
    EVENTARC_API,
    CLOUDBUILD_API,
    ARTIFACTREGISTRY_API,
    STORAGE_API,
    IAM_API,
    "logging.googleapis.com",
)
#: The Eventarc event a Pub/Sub message publishes.
FUNCTION_EVENT = "google.cloud.pubsub.topic.v1.messagePublished"
#: Cloud Billing budgets: at most 5 monitoring notification channels (pulumi-gcp
#: BudgetAllUpdatesRule.monitoring_notification_channels: "A maximum of 5 channels").
MAX_EMAILS = 5
#: Budget API: a billing account id is three groups of six upper-case hex digits.
_BILLING_ACCOUNT = re.compile(r"[0-9A-F]{6}-[0-9A-F]{6}-[0-9A-F]{6}")
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+=?^_`{|}~/-]+@[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$")
_CURRENCY = re.compile(r"[A-Z]{3}")
#: The budget guard's roles. Cloud Build builds the function (Cloud Functions docs,
#: "Configure a custom build service account"). The trigger's account needs Cloud Run
#: Invoker on the function; Eventarc Event Receiver is *not* needed for direct Pub/Sub
#: events; the Pub/Sub service agent needs Service Account Token Creator if it was enabled
#: on or before 8 April 2021 (Eventarc docs, "Roles and permissions for Cloud Run
#: functions targets"). Token Creator is granted on the trigger's account alone, the
#: only account whose tokens the agent mints here, not on the project.
BUILDER_ROLE = "roles/cloudbuild.builds.builder"
INVOKER_ROLE = "roles/run.invoker"
TOKEN_CREATOR_ROLE = "roles/iam.serviceAccountTokenCreator"
#: Cloud Run service names are at most 49 characters, and a gen2 function's service is
#: named after it (Cloud Run docs, "Services": naming).
_FUNCTION_NAME_LIMIT = 49
_STATE_PREFIX = "state/"
_NONCURRENT_DAYS = 30
_ABORT_UPLOAD_DAYS = 7
#: Cloud Functions event-driven functions run for at most 540 s.
_FUNCTION_TIMEOUT_SECONDS = 540

Fraction = float


class BudgetGuardArgs(AistackModel):
    """What a stack may spend, who hears about it, and whether training stops at the limit."""

    governance: Governance
    region: str = Field(
        description="Region of the function, its state bucket and its trigger. Must be in "
        "governance.allowed_regions (C4). The kill switch acts project-wide. Explicit: "
        "never the provider's default."
    )
    billing_account: str = Field(
        description="The Cloud Billing account paying for the project, 'XXXXXX-XXXXXX-"
        "XXXXXX' (Billing > Account management). Required: budgets live on the billing "
        "account, and the caller needs roles/billing.costsManager there."
    )
    monthly_limit_usd: float = Field(
        gt=0,
        description="Monthly budget for the stack, in `currency_code` (named as on AWS). "
        "Required: a budget is the first cost control (C3).",
    )
    daily_limit_usd: float | None = Field(
        None,
        gt=0,
        description="Daily limit. Default: the monthly limit / 30, rounded up to a whole "
        "unit (capped at the monthly limit), so a day at the monthly pace is just inside.",
    )
    currency_code: str = Field(
        "USD",
        description="The billing account's currency: the Budget API refuses a budget in "
        "another one. The limits are in this currency.",
    )
    alert_emails: tuple[str, ...] = Field(
        min_length=1,
        max_length=MAX_EMAILS,
        description="Who is told (1-5 addresses: a budget takes at most 5 notification "
        "channels). Each becomes a Cloud Monitoring e-mail channel.",
    )
    monthly_actual_thresholds: tuple[Fraction, ...] = Field(
        (0.5, 0.8, 1.0),
        min_length=1,
        max_length=10,
        description="Fractions of the monthly limit (1.0 = 100 %, as the Budget API counts) "
        "at which actual spend alerts. Default halfway, time to act, limit reached.",
    )
    monthly_forecast_threshold: Fraction = Field(
        1.0, gt=0, description="Alert when the month's forecast passes this fraction."
    )
    notify_billing_admins: bool = Field(
        True,
        description="Also mail the billing account's administrators and users (the "
        "budget's default recipients). On: they are the fallback when a channel breaks, "
        "as AWS's direct mails are. Set false on a shared billing account where they would "
        "hear of every stack.",
    )
    filter_by_stack_label: bool = Field(
        False,
        description="Count only resources labelled aistack-stack=<stack> (a budget filter "
        "takes one label). Off: the whole project counts, which is the safer default "
        "because unlabelled spend (networking, support) is real spend too.",
    )
    kill_switch: bool = Field(
        False,
        description="Scale the stack's training node pools and managed instance groups "
        "(labelled aistack-stack=<stack>, aistack-workload=training) to zero when actual "
        "spend reaches 100 % of the monthly limit. Off by default: it stops running jobs.",
    )
    kill_switch_dry_run: bool = Field(
        False, description="The kill switch only logs what it would stop. Needs kill_switch."
    )
    allow_disable_billing: bool = Field(
        False,
        description="After scaling to zero, also detach the project from its billing "
        "account. Stops every paid service in the project, can delete resources and lose "
        "data; needs kill_switch. Never the default.",
    )
    topic_kms_key_name: str | None = Field(
        None,
        pattern=r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$",
        description="Encrypt the budget topic with this Cloud KMS key. Optional: the "
        "messages hold cost totals, not data, and Google encrypts them at rest anyway; the "
        "Pub/Sub service agent needs Encrypter/Decrypter on the key.",
    )

    @field_validator("billing_account")
    @classmethod
    def _billing_account_id(cls, account: str) -> str:
        account = account.removeprefix("billingAccounts/")
        if not _BILLING_ACCOUNT.fullmatch(account):
            raise ValueError(
                f"{account!r} is not a billing account id. Fix: use the id shown in "
                "Billing > Account management, e.g. '01A2B3-C4D5E6-F7A8B9'."
            )
        return account

    @field_validator("alert_emails")
    @classmethod
    def _emails_are_addresses(cls, emails: tuple[str, ...]) -> tuple[str, ...]:
        bad = [email for email in emails if not _EMAIL.fullmatch(email)]
        if bad:
            raise ValueError(
                f"not e-mail addresses: {bad}. Fix: use addresses like 'ml-team@example.com'."
            )
        folded = [email.lower() for email in emails]
        if len(set(folded)) != len(folded):
            raise ValueError("an address is listed twice. Fix: list each address once.")
        return emails

    @field_validator("currency_code")
    @classmethod
    def _currency(cls, code: str) -> str:
        if not _CURRENCY.fullmatch(code):
            raise ValueError(f"{code!r} is not an ISO 4217 code. Fix: e.g. 'USD' or 'EUR'.")
        return code

    @field_validator("monthly_actual_thresholds")
    @classmethod
    def _thresholds_alert_in_time(cls, thresholds: tuple[float, ...]) -> tuple[float, ...]:
        if any(t <= 0 for t in thresholds):
            raise ValueError("thresholds are fractions above 0. Fix: e.g. [0.5, 0.8, 1.0].")
        if len(set(thresholds)) != len(thresholds):
            raise ValueError("a threshold is listed twice. Fix: list each fraction once.")
        if any(t > 10 for t in thresholds):
            raise ValueError(
                "thresholds are fractions (1.0 = 100 %), not percentages. Fix: write 0.8 for 80 %."
            )
        if min(thresholds) > 1.0:
            raise ValueError(
                "every threshold is above 1.0 (100 %), so nobody hears before the limit is "
                "passed (checklist C3). Fix: include 1.0 or less, e.g. [0.5, 0.8, 1.0]."
            )
        return tuple(sorted(thresholds))

    def daily_limit(self) -> float:
        if self.daily_limit_usd is not None:
            return self.daily_limit_usd
        return min(float(math.ceil(self.monthly_limit_usd / 30)), self.monthly_limit_usd)


class BudgetGuard(pulumi.ComponentResource):
    """A monthly budget with e-mail and Pub/Sub alerts, a daily-alert function and an
    optional training kill switch."""

    args: BudgetGuardArgs
    budget: gcp.billing.Budget
    topic: gcp.pubsub.Topic
    function: gcp.cloudfunctionsv2.Function
    budget_name: pulumi.Output[str]
    topic_id: pulumi.Output[str]
    function_name: str
    function_service_account_email: pulumi.Output[str]
    state_bucket_name: pulumi.Output[str]
    notification_channel_ids: list[pulumi.Output[str]]

    def __init__(
        self,
        name: str,
        args: BudgetGuardArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        access_logs: DatasetBucket | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices; its project is the one budgeted and
        guarded, and every resource here waits for the APIs it enables. `access_logs`:
        the stack's `logs` DatasetBucket, which receives the guard bucket's usage logs."""

        def checks(args: BudgetGuardArgs) -> None:
            assert services is not None
            _validate(name, args, services, access_logs)

        args = BudgetGuardArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )[0]
        assert services is not None
        super().__init__(
            "aistack:index:GcpBudgetGuard",
            name,
            {"region": args.region, "monthlyLimitUsd": args.monthly_limit_usd},
            opts,
        )
        self.args = args
        self.region = args.region
        self.project = project = services.project
        self.stack = stack_id()
        self._services = services
        labels = labels_for(args.governance, workload="cost-control")
        here = pulumi.InvokeOutputOptions(parent=self, depends_on=services.enabling(IAM_API))
        number = gcp.organizations.get_project_output(project_id=project, opts=here).number

        def on(*apis: str, depends_on: list[pulumi.Resource] | None = None):
            return child_opts(self, depends_on=[*services.enabling(*apis), *(depends_on or [])])

        # ---- budget, topic, channels ---------------------------------------------------
        self.topic = gcp.pubsub.Topic(
            f"{name}-budget-updates",
            project=project,
            labels=labels,
            kms_key_name=args.topic_kms_key_name,
            # Messages are kept where the function runs (C4).
            message_storage_policy=gcp.pubsub.TopicMessageStoragePolicyArgs(
                allowed_persistence_regions=[args.region]
            ),
            opts=on(PUBSUB_API),
        )
        self.topic_id = self.topic.id
        self.channels = [
            gcp.monitoring.NotificationChannel(
                f"{name}-email-{_slug(email)}",
                project=project,
                type="email",
                display_name=f"aistack budget {self.stack}: {email}"[:100],
                labels={"email_address": email},
                user_labels=labels,
                opts=on(MONITORING_API),
            )
            for email in args.alert_emails
        ]
        self.notification_channel_ids = [channel.id for channel in self.channels]
        thresholds = [
            gcp.billing.BudgetThresholdRuleArgs(
                threshold_percent=fraction, spend_basis="CURRENT_SPEND"
            )
            for fraction in args.monthly_actual_thresholds
        ]
        thresholds.append(
            gcp.billing.BudgetThresholdRuleArgs(
                threshold_percent=args.monthly_forecast_threshold,
                spend_basis="FORECASTED_SPEND",
            )
        )
        units, nanos = _money(args.monthly_limit_usd)
        self.budget = gcp.billing.Budget(
            f"{name}-budget",
            billing_account=args.billing_account,
            display_name=f"aistack {self.stack}"[:60],
            budget_filter=gcp.billing.BudgetBudgetFilterArgs(
                # The project NUMBER: an id makes a perpetual diff (research §D1.11).
                projects=[pulumi.Output.concat("projects/", number)],
                calendar_period="MONTH",
                # Gross spend, as on AWS: credits must not hide a runaway job.
                credit_types_treatment="EXCLUDE_ALL_CREDITS",
                labels={gcp_label(STACK_TAG, is_key=True): self.stack}
                if args.filter_by_stack_label
                else None,
            ),
            amount=gcp.billing.BudgetAmountArgs(
                specified_amount=gcp.billing.BudgetAmountSpecifiedAmountArgs(
                    currency_code=args.currency_code, units=units, nanos=nanos
                )
            ),
            threshold_rules=thresholds,
            all_updates_rule=gcp.billing.BudgetAllUpdatesRuleArgs(
                pubsub_topic=self.topic.id,
                schema_version="1.0",
                monitoring_notification_channels=self.notification_channel_ids,
                disable_default_iam_recipients=not args.notify_billing_admins,
            ),
            opts=on(BILLING_BUDGETS_API),
        )
        self.budget_name = self.budget.name

        # ---- the function's identities -------------------------------------------------
        def account(role: str, title: str) -> gcp.serviceaccount.Account:
            return gcp.serviceaccount.Account(
                f"{name}-{role}-sa",
                project=project,
                account_id=_account_id(self.stack, name, role),
                display_name=f"aistack budget guard {self.stack}: {title}"[:100],
                opts=on(IAM_API),
            )

        self.function_account = account("fn", "function")
        self.trigger_account = account("ev", "Eventarc trigger")
        self.build_account = account("build", "function build")
        self.function_service_account_email = self.function_account.email
        self.build_grant = gcp.projects.IAMMember(
            f"{name}-build-builder",
            project=project,
            role=BUILDER_ROLE,
            member=self.build_account.member,
            opts=on(IAM_API),
        )
        permissions = budget_guard_permissions()
        self.state_role = self._custom_role(
            name, "state", permissions["state"], "read and write its daily state"
        )
        self.kill_switch_role: gcp.projects.IAMCustomRole | None = None
        self.kill_switch_grant: gcp.projects.IAMMember | None = None
        if args.kill_switch:
            kill = list(permissions["kill_switch"])
            if args.allow_disable_billing:
                kill += permissions["disable_billing"]
            self.kill_switch_role = self._custom_role(
                name, "killswitch", tuple(kill), "scale training capacity to zero"
            )
            self.kill_switch_grant = gcp.projects.IAMMember(
                f"{name}-kill-switch-grant",
                project=project,
                role=self.kill_switch_role.name,
                member=self.function_account.member,
                opts=on(IAM_API),
            )

        # ---- source and state bucket ---------------------------------------------------
        # One small private bucket: the function's zipped source and its state. Versioned
        # so an overwritten state (previous sizes) stays recoverable for 30 days.
        self.bucket = gcp.storage.Bucket(
            f"{name}-guard",
            project=project,
            location=args.region,
            storage_class="STANDARD",
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            versioning=gcp.storage.BucketVersioningArgs(enabled=True),
            lifecycle_rules=[
                gcp.storage.BucketLifecycleRuleArgs(
                    action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                    condition=gcp.storage.BucketLifecycleRuleConditionArgs(
                        days_since_noncurrent_time=_NONCURRENT_DAYS, with_state="ARCHIVED"
                    ),
                ),
                gcp.storage.BucketLifecycleRuleArgs(
                    action=gcp.storage.BucketLifecycleRuleActionArgs(
                        type="AbortIncompleteMultipartUpload"
                    ),
                    condition=gcp.storage.BucketLifecycleRuleConditionArgs(age=_ABORT_UPLOAD_DAYS),
                ),
            ],
            # Rewritten many times a day: soft delete would bill every old state for 7 days.
            soft_delete_policy=gcp.storage.BucketSoftDeletePolicyArgs(retention_duration_seconds=0),
            logging=(
                gcp.storage.BucketLoggingArgs(
                    log_bucket=access_logs.bucket.name, log_object_prefix=f"usage/{name}"
                )
                if access_logs is not None
                else None
            ),
            labels=labels,
            force_destroy=True,
            opts=on(STORAGE_API),
        )
        self.state_bucket_name = self.bucket.name
        self.state_grant = gcp.storage.BucketIAMMember(
            f"{name}-state-grant",
            bucket=self.bucket.name,
            role=self.state_role.name,
            member=self.function_account.member,
            # Objects under the state prefix only, never the function's source.
            condition=gcp.storage.BucketIAMMemberConditionArgs(
                title="aistack-budget-guard-state",
                description="The budget guard's state objects",
                expression=pulumi.Output.format(
                    'resource.name.startsWith("projects/_/buckets/{0}/objects/{1}")',
                    self.bucket.name,
                    _STATE_PREFIX,
                ),
            ),
            opts=on(STORAGE_API),
        )
        self.build_reads_source = gcp.storage.BucketIAMMember(
            f"{name}-build-source",
            bucket=self.bucket.name,
            role="roles/storage.objectViewer",
            member=self.build_account.member,
            opts=on(STORAGE_API),
        )
        archive, digest = _source_archive()
        self.source = gcp.storage.BucketObject(
            f"{name}-source",
            bucket=self.bucket.name,
            # Named by content: a code change uploads a new object and redeploys.
            name=f"source/budget-guard-{digest}.zip",
            source=archive,
            content_type="application/zip",
            opts=on(STORAGE_API),
        )

        # ---- the function --------------------------------------------------------------
        self.function_name = _function_name(self.stack, name)
        self.function = gcp.cloudfunctionsv2.Function(
            f"{name}-function",
            name=self.function_name,
            project=project,
            location=args.region,
            description=f"aistack budget guard for stack {self.stack}: daily alerts"
            + (" and kill switch" if args.kill_switch else ""),
            labels=labels,
            build_config=gcp.cloudfunctionsv2.FunctionBuildConfigArgs(
                runtime="python312",
                entry_point="handle_budget_update",
                service_account=self.build_account.name,
                source=gcp.cloudfunctionsv2.FunctionBuildConfigSourceArgs(
                    storage_source=gcp.cloudfunctionsv2.FunctionBuildConfigSourceStorageSourceArgs(
                        bucket=self.bucket.name, object=self.source.name
                    )
                ),
            ),
            service_config=gcp.cloudfunctionsv2.FunctionServiceConfigArgs(
                service_account_email=self.function_account.email,
                # Only Eventarc calls it: no route from the internet.
                ingress_settings="ALLOW_INTERNAL_ONLY",
                all_traffic_on_latest_revision=True,
                available_memory="256M",
                timeout_seconds=_FUNCTION_TIMEOUT_SECONDS,
                min_instance_count=0,
                # One at a time: concurrent updates would race on the state object (the
                # generation match would refuse the loser, which is then retried).
                max_instance_count=1,
                max_instance_request_concurrency=1,
                environment_variables=pulumi.Output.all(self.budget.name, self.bucket.name).apply(
                    lambda values: self._environment(str(values[0]), str(values[1]))
                ),
            ),
            event_trigger=gcp.cloudfunctionsv2.FunctionEventTriggerArgs(
                trigger_region=args.region,
                event_type=FUNCTION_EVENT,
                pubsub_topic=self.topic.id,
                service_account_email=self.trigger_account.email,
                # At-least-once with retries: a failed kill switch is retried within
                # seconds, not at the next update hours later. The code is idempotent
                # (cumulative totals, a generation-matched state) and stops retrying an
                # event older than an hour.
                retry_policy="RETRY_POLICY_RETRY",
            ),
            opts=on(
                *FUNCTION_APIS,
                PUBSUB_API,
                # The roles must exist before the first event uses them.
                depends_on=[
                    self.build_grant,
                    self.build_reads_source,
                    self.state_grant,
                    *([self.kill_switch_grant] if self.kill_switch_grant else []),
                ],
            ),
        )
        self.trigger_invoker = gcp.cloudrunv2.ServiceIamMember(
            f"{name}-trigger-invoker",
            project=project,
            location=args.region,
            name=self.function.name,
            role=INVOKER_ROLE,
            member=self.trigger_account.member,
            opts=on(RUN_API),
        )
        self.pubsub_token_creator = gcp.serviceaccount.IAMMember(
            f"{name}-pubsub-token-creator",
            service_account_id=self.trigger_account.name,
            role=TOKEN_CREATOR_ROLE,
            member=pulumi.Output.concat(
                "serviceAccount:service-", number, "@gcp-sa-pubsub.iam.gserviceaccount.com"
            ),
            opts=on(IAM_API),
        )

        # ---- alerts from the function's log --------------------------------------------
        self.daily_alert = self._log_alert(
            name,
            "daily-alert",
            f"aistack {self.stack}: daily spend limit reached",
            'jsonPayload.aistack_event="daily_limit_exceeded"',
            f"The stack's spend today reached the daily limit of {args.daily_limit():g} "
            f"{args.currency_code}. See the function {self.function_name}'s log.",
        )
        self.errors_alert = self._log_alert(
            name,
            "guard-errors",
            f"aistack {self.stack}: budget guard acted or failed",
            'severity>=ERROR AND NOT jsonPayload.aistack_event="daily_limit_exceeded"',
            "The budget guard's kill switch acted, or one of its calls failed: training may "
            "still run past the budget. Read the function's log; previous sizes are in "
            f"gs://<state bucket>/{_STATE_PREFIX}previous-sizes.json.",
        )

        self.register_outputs(
            {
                "budget_name": self.budget_name,
                "topic_id": self.topic_id,
                "function_name": self.function_name,
                "function_service_account_email": self.function_service_account_email,
                "state_bucket_name": self.state_bucket_name,
            }
        )

    def _environment(self, budget_name: str, bucket: str) -> dict[str, str]:
        args = self.args

        def flag(value: bool) -> str:
            return "true" if value else "false"

        return {
            "AISTACK_PROJECT": self.project,
            "AISTACK_STACK": self.stack,
            # billingAccounts/<account>/budgets/<id>: the updates carry `budgetId`.
            "AISTACK_BUDGET_ID": budget_name.rsplit("/", 1)[-1],
            "AISTACK_STATE_BUCKET": bucket,
            "AISTACK_STATE_PREFIX": _STATE_PREFIX,
            "AISTACK_DAILY_LIMIT": f"{args.daily_limit():g}",
            "AISTACK_KILL_SWITCH": flag(args.kill_switch),
            "AISTACK_DRY_RUN": flag(args.kill_switch_dry_run),
            "AISTACK_ALLOW_DISABLE_BILLING": flag(args.allow_disable_billing),
        }

    def _custom_role(
        self, name: str, role: str, permissions: tuple[str, ...], purpose: str
    ) -> gcp.projects.IAMCustomRole:
        return gcp.projects.IAMCustomRole(
            f"{name}-{role}-role",
            project=self.project,
            role_id=_role_id(self.stack, name, role),
            title=f"aistack budget guard {role} ({self.stack})"[:100],
            description=f"Lets the budget guard of stack {self.stack} {purpose}: exactly "
            "the calls its code makes.",
            permissions=sorted(permissions),
            stage="GA",
            opts=child_opts(self, depends_on=self._services.enabling(IAM_API)),
        )

    def _log_alert(
        self, name: str, role: str, title: str, match: str, text: str
    ) -> gcp.monitoring.AlertPolicy:
        # Gen2 functions run as the Cloud Run service of the same name; its JSON stdout
        # lines are log entries of resource type cloud_run_revision.
        log_filter = (
            f'resource.type="cloud_run_revision" AND '
            f'resource.labels.service_name="{self.function_name}" AND {match}'
        )
        return gcp.monitoring.AlertPolicy(
            f"{name}-{role}",
            project=self.project,
            display_name=title[:100],
            combiner="OR",
            severity="ERROR",
            conditions=[
                gcp.monitoring.AlertPolicyConditionArgs(
                    display_name=title[:100],
                    condition_matched_log=gcp.monitoring.AlertPolicyConditionConditionMatchedLogArgs(
                        filter=log_filter
                    ),
                )
            ],
            # Log-match policies require a notification rate limit (Cloud Monitoring docs,
            # "Log-based alerting policies"); the function logs a daily alert once a day.
            alert_strategy=gcp.monitoring.AlertPolicyAlertStrategyArgs(
                notification_rate_limit=gcp.monitoring.AlertPolicyAlertStrategyNotificationRateLimitArgs(
                    period="300s"
                ),
                auto_close="1800s",
            ),
            documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
                content=text, mime_type="text/markdown"
            ),
            notification_channels=self.notification_channel_ids,
            user_labels=labels_for(self.args.governance, workload="cost-control"),
            opts=child_opts(self, depends_on=self._services.enabling(MONITORING_API)),
        )


# ---- validation and helpers ------------------------------------------------------------


def _validate(
    name: str,
    args: BudgetGuardArgs,
    services: ProjectServices,
    access_logs: DatasetBucket | None,
) -> None:
    problems = Problems()
    if access_logs is not None and access_logs.args.kind != "logs":
        problems.add(
            f"{name}.access_logs",
            f"usage logs must go to a bucket of kind 'logs', not {access_logs.args.kind!r}.",
            "pass the stack's logs DatasetBucket.",
        )

    def field(attribute: str) -> str:
        return f"{name}.{to_camel(attribute)}"

    found = args.governance.region_problem(args.region, field("region"), cloud="gcp")
    if found:
        problems.items.append(found)
    problems.items.extend(services.missing(*BUDGET_APIS, *FUNCTION_APIS, where=name))
    if args.daily_limit() > args.monthly_limit_usd:
        problems.add(
            field("daily_limit_usd"),
            f"the daily limit ({args.daily_limit():g}) is above the monthly limit "
            f"({args.monthly_limit_usd:g}), so the daily alert could never come first.",
            "lower dailyLimitUsd (or leave it unset for monthly / 30).",
        )
    if args.kill_switch and 1.0 not in args.monthly_actual_thresholds:
        problems.add(
            field("monthly_actual_thresholds"),
            "the kill switch acts on the budget's 1.0 (100 %) ACTUAL threshold, which "
            "these thresholds do not include.",
            "add 1.0 to monthlyActualThresholds, or turn killSwitch off.",
        )
    if args.kill_switch_dry_run and not args.kill_switch:
        problems.add(
            field("kill_switch_dry_run"),
            "a dry run of the kill switch was asked for, but the kill switch is off.",
            "set killSwitch: true, or drop killSwitchDryRun.",
        )
    if args.allow_disable_billing and not args.kill_switch:
        problems.add(
            field("allow_disable_billing"),
            "disabling billing is part of the kill switch, which is off.",
            "set killSwitch: true as well, or drop allowDisableBilling.",
        )
    problems.raise_if_any()


def _money(amount: float) -> tuple[str, int]:
    """google.type.Money: whole `units` (a string in pulumi-gcp) and `nanos`."""
    units = math.floor(amount)
    return str(units), round((amount - units) * 1e9)


def _digest(*parts: str, length: int = 6) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:length]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _account_id(stack: str, name: str, role: str) -> str:
    """A service account id: 6-30 of [a-z0-9-], starting with a letter; unique to the
    stack and component, as two stacks may share a project."""
    suffix = f"-{role}-{_digest(stack, name)}"
    base = _slug(f"bg-{name}")[: 30 - len(suffix)].rstrip("-")
    return f"{base}{suffix}"


def _role_id(stack: str, name: str, role: str) -> str:
    """A custom role id: 3-64 of [a-zA-Z0-9_.]. Deleted roles keep their id for weeks,
    and the provider undeletes a role created again under it."""
    text = re.sub(r"[^a-zA-Z0-9]+", "_", f"aistack_{stack}_{name}_{role}").strip("_")
    if len(text) <= 64:
        return text
    return f"{text[:57]}_{_digest(text)}"


def _function_name(stack: str, name: str) -> str:
    text = _slug(f"{stack}-{name}-guard")
    if not text[:1].isalpha():
        text = f"bg-{text}"
    if len(text) <= _FUNCTION_NAME_LIMIT:
        return text
    return f"{text[: _FUNCTION_NAME_LIMIT - 7].rstrip('-')}-{_digest(text)}"


def _source_archive() -> tuple[pulumi.Archive, str]:
    """The function's source (main.py, requirements.txt) and a hash of its content. The
    provider uploads an archive as a zip (pulumi-gcp's gcp-py-functions example does the
    same with a FileArchive)."""
    files = ("main.py", "requirements.txt")
    digest = hashlib.sha256()
    for file_name in files:
        digest.update(file_name.encode() + b"\0" + (BUDGET_GUARD_SOURCE / file_name).read_bytes())
    archive = pulumi.AssetArchive(
        {f: pulumi.FileAsset(str(BUDGET_GUARD_SOURCE / f)) for f in files}
    )
    return archive, digest.hexdigest()[:16]
