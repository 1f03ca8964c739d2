"""Typed models of the Job and JobSet objects `k8s.TrainingJobTemplate` renders.

Written from the upstream schemas, for the fields aistack renders (a subset: nothing here
admits a field the API does not have, and every model forbids extra fields, so a misspelt
or misplaced field is a `ConfigError` when the template is built, not a field the API
server prunes or refuses at submit time):

- Kubernetes `batch/v1` Job, `core/v1` PodSpec and friends: the OpenAPI v2 definitions
  `io.k8s.api.batch.v1.JobSpec`, `...PodFailurePolicyRule`, `io.k8s.api.core.v1.PodSpec`,
  `...Container`, `...SecurityContext`, `...EmptyDirVolumeSource` (kubernetes-validate
  ships them; tests/k8s/test_training_job_template.py validates every rendering against
  1.30 and 1.37 strictly);
- JobSet `jobset.x-k8s.io/v1alpha2` at v0.12.0: the CRD kept under
  `aistack/scan/data/crds/jobset-v0.12.0/` (`spec.failurePolicy`, `spec.network`,
  `spec.replicatedJobs[]`), validated with `aistack.scan.crd_schemas`.

Field names are the API's (camelCase aliases of the snake_case attributes).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from aistack.config import AistackModel

__all__ = [
    "Container",
    "EmptyDir",
    "EnvVar",
    "Job",
    "JobSet",
    "JobSetSpec",
    "JobSpec",
    "JobTemplate",
    "ObjectMeta",
    "PodFailurePolicy",
    "PodSpec",
    "PodTemplate",
    "ReplicatedJob",
    "dump",
]


class _Api(AistackModel):
    """Kubernetes objects take booleans and integers as JSON does; pydantic's lax mode
    would turn `"3"` into 3 where the API server refuses it, so AistackModel's strict
    scalars stay on."""


class ObjectMeta(_Api):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class FieldRef(_Api):
    field_path: str
    api_version: str | None = None


class EnvVarSource(_Api):
    field_ref: FieldRef


class EnvVar(_Api):
    name: str
    value: str | None = None
    value_from: EnvVarSource | None = None


class Resources(_Api):
    requests: dict[str, str] | None = None
    limits: dict[str, str] | None = None


class Capabilities(_Api):
    drop: list[str] | None = None
    add: list[str] | None = None


class Seccomp(_Api):
    type: Literal["RuntimeDefault", "Localhost", "Unconfined"]


class SecurityContext(_Api):
    allow_privilege_escalation: bool | None = None
    privileged: bool | None = None
    read_only_root_filesystem: bool | None = None
    run_as_non_root: bool | None = None
    run_as_user: int | None = None
    run_as_group: int | None = None
    capabilities: Capabilities | None = None
    seccomp_profile: Seccomp | None = None


class PodSecurityContext(_Api):
    run_as_non_root: bool | None = None
    run_as_user: int | None = None
    run_as_group: int | None = None
    fs_group: int | None = None
    seccomp_profile: Seccomp | None = None


class VolumeMount(_Api):
    name: str
    mount_path: str
    read_only: bool | None = None
    sub_path: str | None = None


class EmptyDir(_Api):
    medium: Literal["", "Memory"] | None = None
    size_limit: str | None = None


class Volume(_Api):
    name: str
    empty_dir: EmptyDir


class ExecAction(_Api):
    command: list[str]


class LifecycleHandler(_Api):
    exec: ExecAction  # noqa: A003 - the API's field name


class Lifecycle(_Api):
    pre_stop: LifecycleHandler | None = None


class Container(_Api):
    name: str
    image: str
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    resources: Resources | None = None
    security_context: SecurityContext | None = None
    volume_mounts: list[VolumeMount] | None = None
    lifecycle: Lifecycle | None = None
    working_dir: str | None = None


class Toleration(_Api):
    key: str | None = None
    operator: Literal["Exists", "Equal"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None


class PodSpec(_Api):
    restart_policy: Literal["Never", "OnFailure", "Always"]
    priority_class_name: str | None = None
    service_account_name: str | None = None
    automount_service_account_token: bool | None = None
    enable_service_links: bool | None = None
    termination_grace_period_seconds: int | None = None
    security_context: PodSecurityContext | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None
    containers: list[Container] = Field(min_length=1)
    volumes: list[Volume] | None = None


class PodTemplate(_Api):
    metadata: ObjectMeta | None = None
    spec: PodSpec


class PodCondition(_Api):
    type: str
    # Required in the OpenAPI schemas of Kubernetes <= 1.34 (optional from 1.35):
    # kubernetes-validate 1.30 refuses a rule without it.
    status: Literal["True", "False", "Unknown"]


class OnExitCodes(_Api):
    container_name: str | None = None
    operator: Literal["In", "NotIn"]
    values: list[int]


class PodFailurePolicyRule(_Api):
    action: Literal["Ignore", "FailJob", "Count", "FailIndex"]
    on_pod_conditions: list[PodCondition] | None = None
    on_exit_codes: OnExitCodes | None = None


class PodFailurePolicy(_Api):
    rules: list[PodFailurePolicyRule]


class JobSpec(_Api):
    parallelism: int | None = None
    completions: int | None = None
    completion_mode: Literal["NonIndexed", "Indexed"] | None = None
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None
    ttl_seconds_after_finished: int | None = None
    suspend: bool | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    template: PodTemplate


class Job(_Api):
    api_version: Literal["batch/v1"] = "batch/v1"
    kind: Literal["Job"] = "Job"
    metadata: ObjectMeta
    spec: JobSpec


# ---- JobSet v1alpha2 (CRD jobset.x-k8s.io_jobsets.yaml at v0.12.0) ---------------------


class JobTemplate(_Api):
    metadata: ObjectMeta | None = None
    spec: JobSpec


class ReplicatedJob(_Api):
    name: str
    replicas: int | None = None
    template: JobTemplate


class FailurePolicyRule(_Api):
    # Required by the CRD; a webhook defaults it on a live cluster, but a template
    # validated offline must name it.
    name: str = Field(pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    action: Literal[
        "FailJobSet",
        "RestartJobSet",
        "RestartJobSetAndIgnoreMaxRestarts",
        "RestartJob",
        "RestartJobAndIgnoreMaxRestarts",
    ]
    on_job_failure_reasons: list[str] | None = None
    on_job_failure_message_patterns: list[str] | None = None
    target_replicated_jobs: list[str] | None = None


class FailurePolicy(_Api):
    max_restarts: int | None = None
    restart_strategy: Literal["Recreate", "BlockingRecreate", "InPlaceRestart"] | None = None
    rules: list[FailurePolicyRule] | None = None


class Network(_Api):
    enable_dns_hostnames: bool | None = Field(None, alias="enableDNSHostnames")
    publish_not_ready_addresses: bool | None = None
    subdomain: str | None = None


class SuccessPolicy(_Api):
    operator: Literal["All", "Any"]
    target_replicated_jobs: list[str] | None = None


class JobSetSpec(_Api):
    replicated_jobs: list[ReplicatedJob] = Field(min_length=1)
    failure_policy: FailurePolicy | None = None
    success_policy: SuccessPolicy | None = None
    network: Network | None = None
    suspend: bool | None = None
    ttl_seconds_after_finished: int | None = None


class JobSet(_Api):
    api_version: Literal["jobset.x-k8s.io/v1alpha2"] = "jobset.x-k8s.io/v1alpha2"
    kind: Literal["JobSet"] = "JobSet"
    metadata: ObjectMeta
    spec: JobSetSpec


def dump(model: AistackModel) -> dict[str, Any]:
    """The object as the API takes it: API field names, unset fields left out."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")
