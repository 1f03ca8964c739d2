"""`gcp.DatasetBucket`: versioned, lifecycle-managed, CMEK-encrypted, private GCS storage.

The Google Cloud counterpart of `aws.DatasetBucket`, with the same four kinds (dataset,
checkpoints, models, logs) and the same promises: old versions recoverable then retired
(D1), a single region inside the allowed regions (C4, D2), lineage and licence recorded
(D4-D6), never public, kept on `pulumi destroy`. Why each setting: the docs page
docs/components/gcp/dataset-bucket.md.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator, model_validator

from aistack.config import AistackModel, Governance, gcp_label
from aistack.dataset_metadata import DatasetMetadata
from aistack.errors import Problems
from aistack.gcp._base import child_opts, grant_key, labels_for, scoped_id, stateful_opts
from aistack.gcp._kms import KMS_ENCRYPTER, stack_key
from aistack.gcp.project_services import ProjectServices

__all__ = ["DatasetBucket", "DatasetBucketArgs", "DatasetMetadata", "LIFECYCLE_DEFAULTS"]

Kind = Literal["dataset", "checkpoints", "models", "logs"]

STORAGE_API = "storage.googleapis.com"
KMS_API = "cloudkms.googleapis.com"
IAM_API = "iam.googleapis.com"

#: Per kind: (noncurrent days, newest noncurrent versions kept, (days, storage class) to
#: move noncurrent versions to or None, delete live objects after N days or None, soft
#: delete days). Soft delete (on by default, 7 days) bills deleted bytes on top of the
#: noncurrent versions versioning already keeps: kept for data that is expensive to
#: recreate, off for churny checkpoints and append-only logs.
LIFECYCLE_DEFAULTS: dict[str, tuple[int, int, tuple[int, str] | None, int | None, int]] = {
    # Nearline's minimum storage duration is 30 days: moved after 30, kept to 90.
    "dataset": (90, 3, (30, "NEARLINE"), None, 7),
    # Rewritten constantly; old ones matter for days. No class change: minimum durations
    # would bill more than the saving.
    "checkpoints": (14, 5, None, None, 0),
    # The rollback path (S6): a year, in Coldline (90-day minimum) after 30 days.
    "models": (365, 10, (30, "COLDLINE"), None, 7),
    # Append-only usage logs: live objects expire after a year.
    "logs": (30, 0, None, 365, 0),
}
ABORT_INCOMPLETE_UPLOAD_DAYS = 7

#: Cloud Storage delivers usage and storage logs as this group (Cloud Storage docs,
#: "Usage logs & storage logs": grant it roles/storage.objectCreator on the log bucket).
STORAGE_ANALYTICS = "group:cloud-storage-analytics@google.com"
READ_ROLE = "roles/storage.objectViewer"
#: Creates objects, never deletes or overwrites them: "Does not give permission to view,
#: delete, or replace objects" (cloud.google.com/iam/docs/roles-permissions/storage). The
#: write-once grant: a model version, once uploaded, is what serving loads under its name.
WRITE_ROLE = "roles/storage.objectCreator"
#: What replacing an object needs, for a writer that rewrites stable names (a checkpoint
#: flush: `gcloud storage rsync` re-uploads every changed file under its name). Cloud
#: Storage's JSON and XML API permission tables list storage.objects.create plus
#: storage.objects.delete for an upload over an existing object, and
#: storage.multipartUploads.create / abort / listParts for XML multipart uploads
#: (cloud.google.com/storage/docs/access-control/iam-json, iam-xml); a resumable upload
#: is an object insert (create, and delete to replace). gcloud's parallel composite uploads
#: write temporary parts and delete them after the compose: create and delete again
#: (cloud.google.com/storage/docs/parallel-composite-uploads). Reading back and listing,
#: which rsync does to compare, come with READ_ROLE. Versioning keeps the replaced
#: generation as a noncurrent version for the kind's noncurrent days.
REPLACE_PERMISSIONS: tuple[str, ...] = (
    "storage.objects.create",
    "storage.objects.delete",
    "storage.multipartUploads.create",
    "storage.multipartUploads.abort",
    "storage.multipartUploads.listParts",
)
#: The kinds whose writers replace objects by default: checkpoints are rewritten under
#: stable names. Models stay write-once (a served version never changes in place, S6/S7);
#: datasets are versioned by prefix (D4).
REPLACING_KINDS = frozenset({"checkpoints"})


class DatasetBucketArgs(AistackModel):
    kind: Kind = Field(
        description="dataset, checkpoints, models or logs: sets lifecycle, soft delete and, "
        "for logs, that Cloud Storage may write usage logs here."
    )
    region: str = Field(
        description="Single region of the bucket, e.g. 'europe-west4': the compute's "
        "region (D2) and in governance.allowed_regions (C4). Multi- and dual-regions "
        "('EU', 'NAM4') are refused: they place data in regions nobody chose."
    )
    governance: Governance
    dataset: DatasetMetadata | None = Field(
        None, description="Required for kind 'dataset': lineage, licence, basis (D4-D6)."
    )
    bucket_name: str | None = Field(
        None,
        pattern=r"^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$",
        description="Physical name (global); default: the logical name plus a suffix.",
    )
    noncurrent_days: int | None = Field(
        None, ge=1, description="Days an overwritten version is kept (D1); default by kind."
    )
    keep_noncurrent_versions: int | None = Field(
        None, ge=0, le=100, description="Newest overwritten versions kept regardless of age."
    )
    expire_current_after_days: int | None = Field(
        None, ge=1, description="Delete live objects after N days (logs only by default)."
    )
    soft_delete_days: int | None = Field(
        None,
        description="Days deleted objects stay restorable (0, or 7 to 90); default by kind.",
    )
    kms_key_name: str | None = Field(
        None,
        pattern=r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$",
        description="Share an existing Cloud KMS key (its id, in the bucket's region); "
        "default: a new key ring and key, rotated every 90 days.",
    )
    allow_destroy_with_data: bool = Field(
        False,
        description="Let `pulumi destroy` delete the bucket and every object. Off: the "
        "bucket is retained, with deletion_policy PREVENT (and protected in prod).",
    )

    @field_validator("bucket_name")
    @classmethod
    def _bucket_name_gcs_accepts(cls, bucket: str | None) -> str | None:
        # Cloud Storage docs, "Bucket naming requirements".
        if bucket is not None and (bucket.startswith("goog") or "google" in bucket):
            raise ValueError(
                f"Cloud Storage refuses bucket names starting with 'goog' or containing "
                f"'google' ({bucket!r}). Fix: choose another name."
            )
        return bucket

    @field_validator("soft_delete_days")
    @classmethod
    def _soft_delete_gcs_accepts(cls, days: int | None) -> int | None:
        # Cloud Storage: a soft delete retention of 0 (off) or 7 to 90 days.
        if days is not None and days != 0 and not 7 <= days <= 90:
            raise ValueError(
                f"Cloud Storage keeps soft-deleted objects 7 to 90 days, or not at all (0); "
                f"not {days}. Fix: use 0, or 7 to 90."
            )
        return days

    @model_validator(mode="after")
    def _datasets_carry_lineage(self) -> DatasetBucketArgs:
        if self.kind == "dataset" and self.dataset is None:
            raise ValueError(
                "a dataset bucket must say what it holds (checklist D4-D6). Fix: set "
                "dataset: {name, version, source, licence}."
            )
        return self

    def lifecycle(self) -> tuple[int, int, tuple[int, str] | None, int | None, int]:
        days, keep, transition, expire, soft = LIFECYCLE_DEFAULTS[self.kind]
        if self.noncurrent_days is not None:
            days = self.noncurrent_days
        if self.keep_noncurrent_versions is not None:
            keep = self.keep_noncurrent_versions
        if transition is not None and transition[0] >= days:
            transition = None  # Versions would be deleted before the colder class pays.
        if self.expire_current_after_days is not None:
            expire = self.expire_current_after_days
        if self.soft_delete_days is not None:
            soft = self.soft_delete_days
        return days, keep, transition, expire, soft


class DatasetBucket(pulumi.ComponentResource):
    """A versioned, CMEK-encrypted, never-public GCS bucket with lifecycle rules."""

    args: DatasetBucketArgs
    bucket: gcp.storage.Bucket
    bucket_name: pulumi.Output[str]
    uri: pulumi.Output[str]
    kms_key_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: DatasetBucketArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        access_logs: DatasetBucket | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices (its project is the bucket's, and every
        resource here waits for the APIs it enables). `access_logs`: the stack's `logs`
        DatasetBucket, which receives this bucket's usage logs."""

        def checks(args: DatasetBucketArgs) -> None:
            problems = Problems()
            found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
            if found:
                problems.items.append(found)
            assert services is not None
            problems.items.extend(services.missing(STORAGE_API, KMS_API, where=name))
            if access_logs is not None and access_logs.args.kind != "logs":
                problems.add(
                    f"{name}.access_logs",
                    "usage logs must go to a bucket of kind 'logs', not "
                    f"{access_logs.args.kind!r}.",
                    "pass the stack's logs DatasetBucket.",
                )
            if access_logs is not None and access_logs.project != services.project:
                problems.add(
                    f"{name}.access_logs",
                    "the logs bucket is in another project than this bucket.",
                    "use the logs bucket of this project.",
                )
            problems.raise_if_any()

        args = DatasetBucketArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )[0]
        assert services is not None
        super().__init__(
            "aistack:index:GcpDatasetBucket",
            name,
            {"kind": args.kind, "region": args.region},
            opts,
        )
        self.args = args
        self.region = args.region
        self.project = services.project
        self._name = name
        self._services = services
        #: The custom role of replacing writers (checkpoints), made by the first such grant.
        self.replace_role: gcp.projects.IAMCustomRole | None = None
        labels = labels_for(
            args.governance, workload=f"data-{args.kind}", **self._metadata_labels()
        )
        apis = services.enabling(STORAGE_API, KMS_API)

        def keep(*depends_on: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
            # The key, its grant and the bucket stay with the data on `pulumi destroy`.
            return stateful_opts(
                self,
                args.governance,
                allow_destroy=args.allow_destroy_with_data,
                depends_on=[*apis, *depends_on],
                **options,
            )

        deletion_policy = "DELETE" if args.allow_destroy_with_data else "PREVENT"
        here = pulumi.InvokeOutputOptions(parent=self, depends_on=apis)

        # CMEK: the Cloud Storage service agent encrypts on the bucket's behalf, so it must
        # hold Encrypter/Decrypter on the key BEFORE the bucket names the key, or the
        # create fails (Cloud Storage docs, "Use customer-managed encryption keys").
        self.key_ring, self.crypto_key, key_id = stack_key(
            name,
            args.kms_key_name,
            project=self.project,
            location=args.region,
            labels=labels,
            deletion_policy=deletion_policy,
            opts=keep,
        )
        agent = gcp.storage.get_project_service_account_output(project=self.project, opts=here)
        self.key_grant = gcp.kms.CryptoKeyIAMMember(
            f"{name}-key-agent",
            crypto_key_id=key_id,
            role=KMS_ENCRYPTER,
            member=agent.member,
            opts=keep(),
        )
        self.kms_key_name = key_id

        days, keep_n, transition, expire, soft = args.lifecycle()
        self.bucket = gcp.storage.Bucket(
            f"{name}-bucket",
            name=args.bucket_name,
            project=self.project,
            location=args.region,
            storage_class="STANDARD",
            versioning=gcp.storage.BucketVersioningArgs(enabled=True),
            lifecycle_rules=self._lifecycle_rules(days, keep_n, transition, expire),
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            soft_delete_policy=gcp.storage.BucketSoftDeletePolicyArgs(
                retention_duration_seconds=soft * 86400
            ),
            encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=key_id),
            logging=(
                gcp.storage.BucketLoggingArgs(
                    log_bucket=access_logs.bucket.name, log_object_prefix=f"usage/{name}"
                )
                if access_logs is not None
                else None
            ),
            labels=labels,
            force_destroy=args.allow_destroy_with_data,
            deletion_policy=deletion_policy,
            opts=keep(self.key_grant),
        )
        self.bucket_name = self.bucket.name
        self.uri = self.bucket.url.apply(lambda url: f"{url}/")

        self.log_writer: gcp.storage.BucketIAMMember | None = None
        if args.kind == "logs":
            self.log_writer = gcp.storage.BucketIAMMember(
                f"{name}-usage-log-writer",
                bucket=self.bucket.name,
                role=WRITE_ROLE,
                member=STORAGE_ANALYTICS,
                opts=child_opts(self, depends_on=apis),
            )
        self.manifest: gcp.storage.BucketObject | None = None
        if args.dataset is not None:
            # Free text a label cannot hold (a source URL, a legal basis): the manifest.
            self.manifest = gcp.storage.BucketObject(
                f"{name}-manifest",
                bucket=self.bucket.name,
                name=".aistack/manifest.json",
                content=json.dumps(args.dataset.model_dump(by_alias=True), sort_keys=True),
                content_type="application/json",
                opts=child_opts(self, depends_on=apis),
            )

        outputs: dict[str, object] = {
            "bucket_name": self.bucket_name,
            "uri": self.uri,
            "kms_key_name": self.kms_key_name,
            "region": args.region,
            "kind": args.kind,
        }
        if args.dataset is not None:
            outputs["dataset"] = args.dataset.model_dump()
        self.register_outputs(outputs)

    def _metadata_labels(self) -> dict[str, str]:
        meta = self.args.dataset
        if meta is None:
            return {}
        # Name and version as labels (sanitised for GCP); the rest is in the manifest.
        return {
            "aistack:dataset-name": gcp_label(meta.name),
            "aistack:dataset-version": gcp_label(meta.version),
            "aistack:personal-data": "true" if meta.contains_personal_data else "false",
        }

    @staticmethod
    def _lifecycle_rules(
        days: int, keep: int, transition: tuple[int, str] | None, expire: int | None
    ) -> list[gcp.storage.BucketLifecycleRuleArgs]:
        rule = gcp.storage.BucketLifecycleRuleArgs
        action = gcp.storage.BucketLifecycleRuleActionArgs
        condition = gcp.storage.BucketLifecycleRuleConditionArgs
        # Conditions of one rule must all hold, rules OR (Cloud Storage docs, "Object
        # Lifecycle Management"); num_newer_versions counts the live version too. So one
        # Delete rule "noncurrent for `days` AND at least keep+1 newer versions" keeps the
        # newest `keep` noncurrent versions whatever their age, as S3's
        # NewerNoncurrentVersions does.
        expiry = condition(days_since_noncurrent_time=days, with_state="ARCHIVED")
        if keep:
            expiry = condition(
                days_since_noncurrent_time=days,
                num_newer_versions=keep + 1,
                with_state="ARCHIVED",
            )
        rules = [
            rule(action=action(type="Delete"), condition=expiry),
            # Abandoned XML-API multipart uploads are billed until aborted.
            rule(
                action=action(type="AbortIncompleteMultipartUpload"),
                condition=condition(age=ABORT_INCOMPLETE_UPLOAD_DAYS),
            ),
        ]
        if transition is not None:
            rules.append(
                rule(
                    action=action(type="SetStorageClass", storage_class=transition[1]),
                    condition=condition(
                        days_since_noncurrent_time=transition[0], with_state="ARCHIVED"
                    ),
                )
            )
        if expire is not None:
            rules.append(
                rule(
                    action=action(type="Delete"),
                    condition=condition(age=expire, with_state="LIVE"),
                )
            )
        return rules

    # ---- grants --------------------------------------------------------------------------

    def grant_read(
        self, member: pulumi.Input[str], *, prefix: str = "", name: str | None = None
    ) -> list[gcp.storage.BucketIAMMember]:
        """Let `member` ("serviceAccount:...") read objects under `prefix` (the whole
        bucket when empty). `name` keys the grant's resources; by default the member
        does, when it is a plain string."""
        name = name or grant_key(member, f"{self._name}.grant_read.name")
        return [self._grant(member, READ_ROLE, "read", prefix, name)]

    def grant_write(
        self,
        member: pulumi.Input[str],
        *,
        prefix: str = "",
        name: str | None = None,
        replace: bool | None = None,
    ) -> list[gcp.storage.BucketIAMMember]:
        """Let `member` write objects under `prefix`, and read them back. `replace`: may it
        also replace (and so delete) objects there, as a flush that rewrites stable names
        must; default for checkpoints buckets only, every other kind stays write-once
        (REPLACING_KINDS). `name` as for grant_read."""
        name = name or grant_key(member, f"{self._name}.grant_write.name")
        if replace is None:
            replace = self.args.kind in REPLACING_KINDS
        # Called on DatasetBucket explicitly: the multi-language stand-in for a bucket
        # (components/aistack_components/gcp_wiring.py GcsBucketRef) runs this method too.
        role = DatasetBucket._replacing_role(self) if replace else WRITE_ROLE  # noqa: SLF001
        return [
            self._grant(member, READ_ROLE, "write", prefix, f"{name}-viewer"),
            self._grant(member, role, "write", prefix, name),
        ]

    def _replacing_role(self) -> pulumi.Output[str]:
        """The bucket's custom role holding REPLACE_PERMISSIONS, made once and shared by its
        replacing grants (each conditioned on its own prefix). Project-level, as custom roles
        are; its id ends in the stack's digest, so two stacks in a project never meet."""
        role: gcp.projects.IAMCustomRole | None = getattr(self, "replace_role", None)
        if role is None:
            base = "".join(c if c.isalnum() else "_" for c in self._name)[:40]
            role = gcp.projects.IAMCustomRole(
                f"{self._name}-replace-role",
                project=self._services.project,
                role_id=scoped_id(f"aistack_{base}_replace", limit=64, separator="_"),
                title=f"aistack {self._name}: write and replace objects"[:100],
                description="aistack checkpoint writer: create, replace, multipart (T1, E5)",
                permissions=list(REPLACE_PERMISSIONS),
                opts=child_opts(self._grant_owner(), depends_on=self._services.enabling(IAM_API)),
            )
            self.replace_role = role
        return role.name

    def _grant(
        self,
        member: pulumi.Input[str],
        role: pulumi.Input[str],
        verb: str,
        prefix: str,
        name: str,
    ) -> gcp.storage.BucketIAMMember:
        prefix = prefix.strip("/")
        condition = None
        if prefix:
            # IAM Conditions on Cloud Storage (IAM docs, "Resource attributes for IAM
            # Conditions"): objects are named projects/_/buckets/<b>/objects/<object>.
            # storage.objects.list is checked on the bucket itself, so the read grant also
            # matches the bucket: the member can list names across the bucket but read
            # only objects under the prefix.
            objects = pulumi.Output.format(
                'resource.name.startsWith("projects/_/buckets/{0}/objects/{1}/")',
                self.bucket.name,
                prefix,
            )
            expression = (
                pulumi.Output.format(
                    '{0} || resource.name == "projects/_/buckets/{1}"', objects, self.bucket.name
                )
                if role == READ_ROLE
                else objects
            )
            condition = gcp.storage.BucketIAMMemberConditionArgs(
                title=f"aistack-{verb}-{gcp_label(prefix)}"[:100],
                description=f"aistack {verb} grant under {prefix}/",
                expression=expression,
            )
        return gcp.storage.BucketIAMMember(
            f"{self._name}-{verb}-{name}",
            bucket=self.bucket.name,
            role=role,
            member=member,
            condition=condition,
            opts=child_opts(self._grant_owner(), depends_on=self._services.enabling(STORAGE_API)),
        )

    def _grant_owner(self) -> pulumi.Resource:
        """The grants' parent: this bucket (a stand-in for one names its owner instead)."""
        return self
