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
from pydantic import Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from aistack.config import STACK_TAG, AistackModel, Governance, gcp_label
from aistack.contracts.budget import RENAMED_LIMITS, renamed_fields
from aistack.errors import Problems
from aistack.gcp._base import child_opts, labels_for, scoped_id, stack_id
from aistack.gcp._kms import KMS_ENCRYPTER, stack_key
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
KMS_API = "cloudkms.googleapis.com"
#: The budget, its topic (CMEK) and its e-mail channels.
BUDGET_APIS = (BILLING_BUDGETS_API, PUBSUB_API, MONITORING_API, KMS_API)
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
#: The build account's roles: the minimal set Cloud Functions documents for a custom build
#: service account (cloud.google.com/functions/docs/securing/build-custom-sa, "Grant
#: permissions"): Logs Writer for the build's logs, Artifact Registry Writer on the
#: repository the image goes to, Storage Object Viewer on the source bucket. Not Cloud
#: Build Builder (roles/cloudbuild.builds.builder, project-wide builds and bucket writes),
#: which the same page offers only for the default Compute Engine account.
BUILD_LOG_ROLE = "roles/logging.logWriter"
BUILD_IMAGE_ROLE = "roles/artifactregistry.writer"
BUILD_SOURCE_ROLE = "roles/storage.objectViewer"
#: Eventarc's service agent needs this role on the project to validate and run a trigger.
#: Granted explicitly: on a fresh project the automatic grant lags the API's enabling, and
#: the function's create fails with "Permission denied while using the Eventarc Service
#: Agent" (hashicorp/terraform-provider-google#25294; terraform-google-modules/
#: terraform-docs-samples#486; the fix in GoogleCloudPlatform/terraform-ml-image-
#: annotation-gcf PR #21: the Eventarc identity and this role).
EVENTARC_AGENT_ROLE = "roles/eventarc.serviceAgent"
#: The trigger's account needs Cloud Run Invoker on the function; Eventarc Event Receiver
#: is *not* needed for direct Pub/Sub events; the Pub/Sub service agent needs Service
#: Account Token Creator if it was enabled on or before 8 April 2021 (Eventarc docs,
#: "Roles and permissions for Cloud Run functions targets"). Token Creator is granted on
#: the trigger's account alone, the only account whose tokens the agent mints here.
INVOKER_ROLE = "roles/run.invoker"
TOKEN_CREATOR_ROLE = "roles/iam.serviceAccountTokenCreator"
#: Cloud Run service names are at most 49 characters, and a gen2 function's service is
#: named after it (Cloud Run docs, "Services": naming).
_FUNCTION_NAME_LIMIT = 49
#: The function's images: the newest few kept (a rollback target), the rest deleted after a
#: month (Artifact Registry cleanup policies; keep policies win over delete policies).
_KEEP_IMAGES = 3
_IMAGE_EXPIRY_SECONDS = 30 * 86400
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
    monthly_limit: float = Field(
        gt=0,
        description="Monthly budget for the stack, in `currency_code` (the billing "
        "account's currency, e.g. EUR). Required: a budget is the first cost control (C3). "
        "Was monthlyLimitUsd (still accepted, deprecated).",
    )
    daily_limit: float | None = Field(
        None,
        gt=0,
        description="Daily limit, in `currency_code`. Default: the monthly limit / 30, "
        "rounded up to a whole unit (capped at the monthly limit), so a day at the monthly "
        "pace is just inside. Was dailyLimitUsd (still accepted, deprecated).",
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
    kms_key_name: str | None = Field(
        None,
        pattern=r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$",
        description="Cloud KMS key (in `region`) for the budget topic and the function's "
        "image repository. Default: a key of the guard's own, as every aistack component "
        "that stores anything has (CMEK). The guard grants the Pub/Sub and Artifact "
        "Registry service agents Encrypter/Decrypter on it. Was topicKmsKeyName (still "
        "accepted, deprecated).",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: object) -> object:
        return renamed_fields(
            data,
            {**RENAMED_LIMITS, "topic_kms_key_name": "kms_key_name"},
            component="gcp.BudgetGuard",
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

    def effective_daily_limit(self) -> float:
        """`daily_limit`, or its default: the monthly limit / 30 rounded up."""
        if self.daily_limit is not None:
            return self.daily_limit
        return min(float(math.ceil(self.monthly_limit / 30)), self.monthly_limit)


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
    kms_key_name: pulumi.Output[str]
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
            {"region": args.region, "monthlyLimit": args.monthly_limit},
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

        self._on = on
        self.function_name = _function_name(name)
        self._encryption(name, labels)

        # ---- budget, topic, channels ---------------------------------------------------
        self.topic = gcp.pubsub.Topic(
            f"{name}-budget-updates",
            project=project,
            labels=labels,
            # CMEK, as the stack's buckets and registries (checkov CKV_GCP_83): the Pub/Sub
            # agent must hold the key before the topic names it.
            kms_key_name=self.kms_key_name,
            # Messages are kept where the function runs (C4).
            message_storage_policy=gcp.pubsub.TopicMessageStoragePolicyArgs(
                allowed_persistence_regions=[args.region]
            ),
            opts=on(PUBSUB_API, depends_on=[self.topic_key_grant]),
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
        units, nanos = _money(args.monthly_limit)
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
                account_id=_account_id(name, role),
                display_name=f"aistack budget guard {self.stack}: {title}"[:100],
                opts=on(IAM_API),
            )

        self.function_account = account("fn", "function")
        self.trigger_account = account("ev", "Eventarc trigger")
        self.build_account = account("build", "function build")
        self.function_service_account_email = self.function_account.email
        self.build_logs = gcp.projects.IAMMember(
            f"{name}-build-logs",
            project=project,
            role=BUILD_LOG_ROLE,
            member=self.build_account.member,
            opts=on(IAM_API),
        )
        self._build_repository(name, labels)
        self._eventarc_agent(name)
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
            # The stack's key, as the topic and the build repository (the state records
            # what the kill switch stopped, the source is the function's code).
            encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=self.kms_key_name),
            labels=labels,
            # The state matters only while the pools it sizes exist, and the same destroy
            # deletes them; versioning keeps each overwritten state for the days above.
            force_destroy=True,
            opts=on(STORAGE_API, depends_on=[self.bucket_key_grant]),
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
            role=BUILD_SOURCE_ROLE,
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
                # The guard's own repository, which exists before the build and holds the
                # build account's only Artifact Registry grant. The default, gcf-artifacts,
                # is created by the first deploy, so nothing can be granted on it first.
                docker_repository=self.build_repository.id,
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
                # The roles must exist before the build and the first event use them; the
                # Eventarc agent's role before the trigger is validated.
                depends_on=[
                    self.build_logs,
                    self.build_writes_images,
                    self.build_reads_source,
                    self.eventarc_agent_grant,
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
            member=self.pubsub_agent.member,
            opts=on(IAM_API),
        )

        # ---- alerts from the function's log --------------------------------------------
        self.daily_alert = self._log_alert(
            name,
            "daily-alert",
            f"aistack {self.stack}: daily spend limit reached",
            'jsonPayload.aistack_event="daily_limit_exceeded"',
            f"The stack's spend today reached the daily limit of {args.effective_daily_limit():g} "
            f"{args.currency_code}. See the function {self.function_name}'s log.",
        )
        self.errors_alert = self._log_alert(
            name,
            "guard-errors",
            f"aistack {self.stack}: budget guard failed",
            "severity>=ERROR AND NOT jsonPayload.aistack_event="
            '("daily_limit_exceeded" OR "kill_switch_acted")',
            "One of the budget guard's calls failed: training may still run past the "
            "budget. Read the function's log; previous sizes are in "
            f"gs://<state bucket>/{_STATE_PREFIX}previous-sizes.json.",
        )
        self.kill_switch_alert: gcp.monitoring.AlertPolicy | None = None
        if args.kill_switch:
            # The e-mail says what was stopped: the function logs it as `stopped`, and a
            # label extractor hands it to the documentation (Cloud Monitoring LogMatch
            # `label_extractors`: "Label keys and corresponding values can be used in
            # notifications"; docs "Annotate notifications with user-defined
            # documentation": ${log.extracted_label.KEY}).
            self.kill_switch_alert = self._log_alert(
                name,
                "kill-switch",
                f"aistack {self.stack}: budget kill switch stopped training",
                'jsonPayload.aistack_event="kill_switch_acted"',
                "The monthly budget is spent: the kill switch scaled to zero: "
                "${log.extracted_label.stopped}. Previous sizes are in "
                f"gs://<state bucket>/{_STATE_PREFIX}previous-sizes.json; restore them by "
                "hand once the budget allows.",
                label_extractors={"stopped": "EXTRACT(jsonPayload.stopped)"},
            )

        self.register_outputs(
            {
                "budget_name": self.budget_name,
                "topic_id": self.topic_id,
                "function_name": self.function_name,
                "function_service_account_email": self.function_service_account_email,
                "state_bucket_name": self.state_bucket_name,
                "kms_key_name": self.kms_key_name,
            }
        )

    def _encryption(self, name: str, labels: dict[str, str]) -> None:
        """The key the topic, the image repository and the guard bucket are encrypted with,
        and its grants to the three service agents that encrypt on their behalf.
        ServiceIdentity makes each agent exist before the grant names it (a grant to a
        missing agent fails)."""
        on = self._on
        self.key_ring, self.crypto_key, self.kms_key_name = stack_key(
            name,
            self.args.kms_key_name,
            project=self.project,
            location=self.region,
            labels=labels,
            # Nothing here outlives the stack: budget messages, build images, the state.
            deletion_policy="DELETE",
            opts=lambda: on(KMS_API),
        )
        self.pubsub_agent = gcp.projects.ServiceIdentity(
            f"{name}-pubsub-agent", project=self.project, service=PUBSUB_API, opts=on(PUBSUB_API)
        )
        self.registry_agent = gcp.projects.ServiceIdentity(
            f"{name}-registry-agent",
            project=self.project,
            service=ARTIFACTREGISTRY_API,
            opts=on(ARTIFACTREGISTRY_API),
        )
        # Pub/Sub docs, "Configure message encryption": the Pub/Sub service agent needs
        # Encrypter/Decrypter on the key; Artifact Registry docs, "Enabling customer-managed
        # encryption keys": likewise its agent, before the repository names the key.
        self.topic_key_grant = gcp.kms.CryptoKeyIAMMember(
            f"{name}-key-pubsub",
            crypto_key_id=self.kms_key_name,
            role=KMS_ENCRYPTER,
            member=self.pubsub_agent.member,
            opts=on(KMS_API),
        )
        self.registry_key_grant = gcp.kms.CryptoKeyIAMMember(
            f"{name}-key-registry",
            crypto_key_id=self.kms_key_name,
            role=KMS_ENCRYPTER,
            member=self.registry_agent.member,
            opts=on(KMS_API),
        )
        # Cloud Storage docs, "Use customer-managed encryption keys": the project's Cloud
        # Storage service agent encrypts the guard bucket's objects (its state and the
        # function's source) and must hold the key before the bucket names it.
        storage_agent = gcp.storage.get_project_service_account_output(
            project=self.project,
            opts=pulumi.InvokeOutputOptions(
                parent=self, depends_on=self._services.enabling(STORAGE_API)
            ),
        )
        self.bucket_key_grant = gcp.kms.CryptoKeyIAMMember(
            f"{name}-key-storage",
            crypto_key_id=self.kms_key_name,
            role=KMS_ENCRYPTER,
            member=storage_agent.member,
            opts=on(KMS_API),
        )

    def _build_repository(self, name: str, labels: dict[str, str]) -> None:
        """The function's image repository and the build account's write grant on it, on
        this repository only. Cloud Functions' default repository, `gcf-artifacts`, is
        created by the first deploy, so a repository-level grant on it fails on a fresh
        project, and a project-level Artifact Registry Writer would reach every repository:
        the Cloud Functions docs offer the function's `dockerRepository` for this ("you can
        also provide your own repository", build-custom-sa page)."""
        on = self._on
        self.build_repository = gcp.artifactregistry.Repository(
            f"{name}-builds",
            project=self.project,
            location=self.region,
            repository_id=_repository_id(name),
            format="DOCKER",
            description=f"Images of the aistack budget guard function {self.function_name}",
            kms_key_name=self.kms_key_name,
            cleanup_policy_dry_run=False,
            cleanup_policies=[
                gcp.artifactregistry.RepositoryCleanupPolicyArgs(
                    id="keep-newest",
                    action="KEEP",
                    most_recent_versions=gcp.artifactregistry.RepositoryCleanupPolicyMostRecentVersionsArgs(
                        keep_count=_KEEP_IMAGES
                    ),
                ),
                gcp.artifactregistry.RepositoryCleanupPolicyArgs(
                    id="delete-old",
                    action="DELETE",
                    condition=gcp.artifactregistry.RepositoryCleanupPolicyConditionArgs(
                        older_than=f"{_IMAGE_EXPIRY_SECONDS}s"
                    ),
                ),
            ],
            labels=labels,
            opts=on(ARTIFACTREGISTRY_API, depends_on=[self.registry_key_grant]),
        )
        self.build_writes_images = gcp.artifactregistry.RepositoryIamMember(
            f"{name}-build-images",
            project=self.project,
            location=self.region,
            repository=self.build_repository.name,
            role=BUILD_IMAGE_ROLE,
            member=self.build_account.member,
            opts=on(ARTIFACTREGISTRY_API),
        )

    def _eventarc_agent(self, name: str) -> None:
        """The Eventarc service agent, made to exist and granted its role explicitly, so
        the trigger does not wait on the automatic grant (see EVENTARC_AGENT_ROLE). IAM
        still propagates in the background: a fresh project's first `up` may need one
        rerun (docs/components/gcp/budget-guard.md, "First deployment")."""
        on = self._on
        self.eventarc_agent = gcp.projects.ServiceIdentity(
            f"{name}-eventarc-agent",
            project=self.project,
            service=EVENTARC_API,
            opts=on(EVENTARC_API),
        )
        self.eventarc_agent_grant = gcp.projects.IAMMember(
            f"{name}-eventarc-agent-role",
            project=self.project,
            role=EVENTARC_AGENT_ROLE,
            member=self.eventarc_agent.member,
            # The project's one Eventarc agent and the role Google grants it anyway: every
            # stack of the project declares the same binding, so none may remove it on
            # destroy, or the others' triggers lose their agent (aistack.engine.lifecycle).
            opts=pulumi.ResourceOptions.merge(
                on(IAM_API), pulumi.ResourceOptions(retain_on_delete=True)
            ),
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
            "AISTACK_DAILY_LIMIT": f"{args.effective_daily_limit():g}",
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
        self,
        name: str,
        role: str,
        title: str,
        match: str,
        text: str,
        *,
        label_extractors: dict[str, str] | None = None,
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
                        filter=log_filter, label_extractors=label_extractors
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
    if args.effective_daily_limit() > args.monthly_limit:
        problems.add(
            field("daily_limit"),
            f"the daily limit ({args.effective_daily_limit():g}) is above the monthly limit "
            f"({args.monthly_limit:g}), so the daily alert could never come first.",
            "lower dailyLimit (or leave it unset for monthly / 30).",
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


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# Fixed ids end in the stack's digest (aistack.contracts.naming, rule AIS-D1-04): two
# stacks of one project, or this program's dev beside its staging, never pick the same one.


def _account_id(name: str, role: str) -> str:
    """A service account id: 6-30 of [a-z0-9-], starting with a letter."""
    return scoped_id(_slug(f"bg-{name}-{role}"), limit=30)


def _role_id(stack: str, name: str, role: str) -> str:
    """A custom role id: 3-64 of [a-zA-Z0-9_.]. Deleted roles keep their id for weeks,
    and the provider undeletes a role created again under it."""
    text = re.sub(r"[^a-zA-Z0-9]+", "_", f"aistack_{stack}_{name}_{role}").strip("_")
    return scoped_id(text, limit=64, separator="_")


def _function_name(name: str) -> str:
    """The function's (and its Cloud Run service's) name, starting with a letter."""
    text = _slug(f"{name}-guard")
    if not text[:1].isalpha():
        text = f"bg-{text}"
    return scoped_id(text, limit=_FUNCTION_NAME_LIMIT)


def _repository_id(name: str) -> str:
    """The image repository's id: 63 of [a-z0-9-], starting with a letter."""
    return scoped_id(_slug(f"bg-{name}-builds"), limit=63)


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
