"""`k8s.TrainingJobTemplate`: a training Job (one node) or JobSet (several) as a template in
a ConfigMap, and the command that submits a run of it to the team's Kueue queue.

Why a template and not a Job in the stack: pulumi-kubernetes waits for a Job to complete
(its await logic, 10 minutes by default), and a Job that Kueue holds suspended never does,
so `pulumi up` would hang and then fail; a run is also not infrastructure: each run is a new
object (`metadata.generateName`), the stack holds the template (research gcp-k8s.md §0.7,
§D2.2; AWS Batch has the same split between job definition and job).

What every run carries, and why (docs/components/k8s/training-job-template.md says more):

- the Kueue LocalQueue label, `suspend: true` (nothing runs unqueued), a hard deadline
  per admission (`activeDeadlineSeconds`) and Kueue's maximum execution time across
  admissions (`kueue.x-k8s.io/max-exec-time-seconds`, T5);
- retries that do not count preemptions: a pod failed with the `DisruptionTarget`
  condition (preemption, eviction, node shutdown) is ignored by the Job's
  `podFailurePolicy`; other failures use a bounded `backoffLimit`. A JobSet restarts on
  disruptions without counting them and at most `maxRetries` times for anything else (T2);
- the checkpoint URI and resume environment, a grace period within what Spot gives, and a
  preStop hook that signals the trainer to checkpoint (T1, E5);
- the run manifest in the environment and on the object: run id, seed, code commit, config
  hash, dataset version (D4, E3, E4), with the same AISTACK_* names as aws.TrainingPool;
- a node-local dataset cache (`emptyDir` with a `sizeLimit`, path keyed by dataset
  version, and an `ephemeral-storage` request so the pod lands on a node with the disk, D3);
- Pod Security `restricted` (non-root, RuntimeDefault seccomp, no capabilities, no privilege
  escalation, read-only root filesystem) with the writable paths model code needs: `/tmp`,
  a writable home for `~/.cache`, and `/dev/shm` in memory;
- the image by digest only (E1), GPUs as requests and limits, and annotations that stop
  Karpenter and the cluster autoscaler from consolidating a node under a running trainer.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, field_validator

from aistack.config import AistackModel, Governance
from aistack.contracts.images import require_digest
from aistack.contracts.k8s import EPHEMERAL_STORAGE, parse_quantity
from aistack.contracts.model_versions import is_moving_label
from aistack.errors import Problems
from aistack.k8s import _job_models as m
from aistack.k8s._base import annotations_for, child_opts, labels_for

if TYPE_CHECKING:
    from aistack.k8s.team_namespace import TeamNamespace

__all__ = [
    "DATA_KEY",
    "KUEUE_MAX_EXEC_TIME_LABEL",
    "KUEUE_QUEUE_LABEL",
    "PLACEHOLDERS",
    "TEMPLATE_LABEL",
    "TrainingJobTemplate",
    "TrainingJobTemplateArgs",
]

#: Kueue v0.19.2 `pkg/controller/constants/constants.go`: QueueLabel and
#: MaxExecTimeSecondsLabel; the webhook refuses a max-exec-time that is not a positive
#: integer (`pkg/controller/jobframework/validation.go`, validateCreateForMaxExecTime), and
#: Kueue counts it across admissions (a requeued workload keeps its past execution time).
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
#: The ConfigMap label naming the kind of template it holds; `aistack.queries.k8s`
#: reads templates from any ConfigMap, the label only helps people find them.
TEMPLATE_LABEL = "aistack.dev/job-template"
#: The ConfigMap key holding the template (JSON, which kubectl reads as it reads YAML, and
#: which `sed` can fill in without re-indenting anything).
DATA_KEY = "manifest.json"
#: Per-run values the submit command fills in (E3, E4): AISTACK_* variable -> the marker in
#: the template. Markers are valid label values, so the template itself validates.
PLACEHOLDERS = {
    "AISTACK_RUN_ID": "AISTACK_SUBMIT_RUN_ID",
    "AISTACK_SEED": "AISTACK_SUBMIT_SEED",
    "AISTACK_CODE_COMMIT": "AISTACK_SUBMIT_CODE_COMMIT",
    "AISTACK_CONFIG_HASH": "AISTACK_SUBMIT_CONFIG_HASH",
}
#: Pod annotations that keep autoscalers from removing a node under a running trainer:
#: Karpenter (karpenter.sh docs, "Disruption": pod-level `karpenter.sh/do-not-disrupt`)
#: and the cluster autoscaler, which GKE runs (autoscaler FAQ, "What types of pods can
#: prevent CA from removing a node?": `cluster-autoscaler.kubernetes.io/safe-to-evict`).
DO_NOT_DISRUPT = {
    "karpenter.sh/do-not-disrupt": "true",
    "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
}
#: Kubernetes job controller (pkg/controller/job/pod_failure_policy.go): a FailJob rule on a
#: pod condition fails the Job with reason PodFailurePolicy and the message "Pod <ns>/<pod>
#: has condition <type> matching FailJob rule at index <i>". JobSet rules match on both.
_DISRUPTION_MESSAGE = "has condition DisruptionTarget matching FailJob rule"
#: JobSet v0.12.0 label on every pod (api/jobset/v1alpha2/jobset_types.go JobSetNameKey)
#: and annotation (pkg/constants RestartsKey, set by the controller on each pod template).
_JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
_JOBSET_RESTARTS = "jobset.sigs.k8s.io/restart-attempt"

_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
#: JobSet names its pods <jobset>-<replicatedJob>-<jobIndex>-<podIndex>-<5 random> and
#: refuses names past 63 (pkg/webhooks/jobset_webhook.go); with generateName's 5 characters
#: and up to 999 workers, a run name prefix of at most 30 keeps every pod name legal.
_RUN_NAME = r"^[a-z]([-a-z0-9]{0,28}[a-z0-9])?$"
_LABEL_VALUE = r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_URI = r"^[a-z][a-z0-9+.-]*://[^\s]+$"

#: Where the writable volumes are mounted. HOME is a volume of its own, so `~/.cache`
#: (Hugging Face, torch hub, pip), `~/.triton` and `~/.config` are writable under a
#: read-only root filesystem (research gcp-k8s.md §D2.8).
HOME = "/home/trainer"
CACHE = "/cache"
#: Leaves room after the preStop signal for the kubelet's SIGTERM; GKE Spot gives non-system
#: pods 15 s (GKE docs, "Spot VMs": termination), an AWS Spot notice 2 minutes.
MAX_GRACE_SECONDS = 120
_RESERVED_ENV_PREFIX = "AISTACK_"


class TrainingJobTemplateArgs(AistackModel):
    governance: Governance
    queue: str = Field(
        pattern=_DNS_LABEL,
        description="The team's Kueue LocalQueue (k8s.TrainingQueue's `local_queue_names`): "
        f"the `{KUEUE_QUEUE_LABEL}` label. Required: aistack always queues.",
    )
    service_account: str = Field(
        pattern=_DNS_LABEL,
        description="The trainer's ServiceAccount in the namespace (one of "
        "k8s.TeamNamespace's `serviceAccounts`), which carries its cloud identity.",
    )
    namespace: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description="The team namespace. Default: the `team=` TeamNamespace's.",
    )
    run_name: str | None = Field(
        None,
        pattern=_RUN_NAME,
        description="Prefix of each run's object name (`metadata.generateName`, at most 30 "
        "characters, starting with a letter). Default: the component's name.",
    )
    image: str = Field(description="Training image by digest (E1): repo@sha256:<64 hex>.")
    command: tuple[str, ...] = Field(
        ("python", "-m", "train"),
        min_length=1,
        description="The trainer's command; it runs as PID 1, which the preStop hook signals.",
    )
    args: tuple[str, ...] = Field((), description="Arguments after the command.")
    nodes: int = Field(
        1,
        ge=1,
        le=1000,
        description="Nodes (pods) per run. 1 renders a batch/v1 Job; more renders a JobSet "
        "with one leader and nodes-1 workers, reachable by name through the headless "
        "Service JobSet creates.",
    )
    gpus_per_node: int = Field(ge=0, le=16, description="GPUs per pod (requests = limits).")
    gpu_resource: str = Field(
        "nvidia.com/gpu",
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
        description="The device plugin's extended resource.",
    )
    cpu: str = Field("8", description="CPU per pod (requests = limits).")
    memory: str = Field(
        "64Gi",
        description="Memory per pod (requests = limits). /dev/shm is memory-backed and counts "
        "against it.",
    )
    max_runtime_minutes: int = Field(
        ge=10,
        description="Hard wall-clock limit of a run (T5): the Job's activeDeadlineSeconds and "
        "Kueue's max execution time. Required: a run without a limit bills until someone "
        "notices.",
    )
    max_retries: int = Field(
        3,
        ge=0,
        le=10,
        description="Failures retried that are not disruptions (T2): the Job's backoffLimit, "
        "or the JobSet's maxRestarts. Preemptions and evictions are not counted.",
    )
    checkpoint_uri: str = Field(
        pattern=_URI,
        description="Where runs write checkpoints (gs://, s3://...): each run under "
        "<uri>/<run id>, which AISTACK_RUN_CHECKPOINT_URI names (T1, E5).",
    )
    dataset_uri: str = Field(pattern=_URI, description="The dataset's location, unversioned.")
    dataset_version: str = Field(
        pattern=_LABEL_VALUE,
        description="The dataset version every run of this template reads (D4): appended to "
        "the dataset URI and the cache path, and labelled on the run.",
    )
    dataset_cache_gib: int = Field(
        200,
        ge=1,
        description="Node-local dataset and checkpoint cache (emptyDir sizeLimit, D3). Put "
        "the pool's NVMe under the kubelet (GKE local SSD ephemeral storage, Karpenter "
        "instanceStorePolicy RAID0) and keep this below what a node has.",
    )
    tmp_gib: int = Field(10, ge=1, description="/tmp (emptyDir sizeLimit).")
    home_gib: int = Field(
        20, ge=1, description="The writable home for ~/.cache and friends (emptyDir sizeLimit)."
    )
    shared_memory_gib: int = Field(
        16,
        ge=1,
        description="/dev/shm for NCCL and data loader workers (emptyDir medium Memory).",
    )
    termination_grace_seconds: int = Field(
        15,
        ge=1,
        le=MAX_GRACE_SECONDS,
        description="terminationGracePeriodSeconds. Default 15: what GKE Spot gives "
        "non-system pods; more has no effect there. AWS Spot gives 2 minutes from the "
        "notice, less what Karpenter's drain takes.",
    )
    checkpoint_signal: Literal["TERM", "USR1", "USR2"] = Field(
        "TERM",
        description="The signal the preStop hook sends PID 1 when the pod is stopped "
        "(preemption, Spot reclaim, drain): the trainer writes a checkpoint and exits. The "
        "hook then holds the kubelet's SIGTERM off until the grace period ends, so the "
        "trainer is signalled once. Named to the trainer in AISTACK_CHECKPOINT_SIGNAL.",
    )
    run_as_user: int = Field(
        10001,
        ge=1000,
        description="UID (and GID) the trainer runs as: non-root, above the range images "
        "give system users.",
    )
    api_token: bool = Field(
        False,
        description="Mount the ServiceAccount's Kubernetes API token into the pods. Off: a "
        "trainer does not call the API server (C6).",
    )
    priority_class: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description=f"A Kueue WorkloadPriorityClass (`{KUEUE_PRIORITY_LABEL}`).",
    )
    priority_class_name: str | None = Field(
        None,
        max_length=253,
        pattern=r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$",
        description="The pods' PriorityClass, below serving's (S1): on shared nodes the "
        "scheduler evicts training first. k8s.TrainingQueue makes `<clusterQueue>-training` "
        "(`queue.priority_class_names['training']`, preemptionPolicy Never). Rule AIS-S1-13 "
        "fails templates without one.",
    )
    environment: dict[str, str] = Field(
        default_factory=dict,
        description="Extra environment (no secrets: the cloud identity gives credentials). "
        "AISTACK_* names are the template's own.",
    )
    tracker_uri: str | None = Field(None, description="Experiment tracker, as AISTACK_TRACKER_URI.")
    keep_finished_hours: int = Field(
        72,
        ge=1,
        description="Finished runs (and their pods' logs) are deleted after this "
        "(ttlSecondsAfterFinished).",
    )
    config_file: str = Field(
        "config.yaml",
        min_length=1,
        description="The run configuration the submit command hashes into AISTACK_CONFIG_HASH.",
    )

    @field_validator("dataset_version")
    @classmethod
    def _a_pinned_dataset_version(cls, version: str) -> str:
        # D4: a run records the data it read; a moving name records nothing.
        if is_moving_label(version):
            raise ValueError(
                f"{version!r} names whatever is newest, not a dataset version (checklist "
                "D4): two runs of this template could read different data and neither "
                "record which. Fix: give the version the dataset was stored under, e.g. "
                "the dataset bucket's 'v3'."
            )
        return version

    @field_validator("image")
    @classmethod
    def _image_by_digest(cls, image: str) -> str:
        return require_digest(image, "image")

    @field_validator("cpu", "memory")
    @classmethod
    def _is_a_quantity(cls, text: str) -> str:
        try:
            value = parse_quantity(text)
        except ValueError as error:
            raise ValueError(f"{error}. Fix: write e.g. '8', '500m' or '64Gi'.") from None
        if value <= 0:
            raise ValueError(f"{text!r} is not positive. Fix: request some.")
        return text

    @property
    def kind(self) -> Literal["Job", "JobSet"]:
        return "Job" if self.nodes == 1 else "JobSet"


class TrainingJobTemplate(pulumi.ComponentResource):
    """A training run template in a ConfigMap, and the command that submits a run."""

    args: TrainingJobTemplateArgs
    config_map: k8s.core.v1.ConfigMap
    config_map_name: pulumi.Output[str]
    namespace: pulumi.Output[str]
    submit_command: pulumi.Output[str]
    #: The rendered Job or JobSet (without its namespace), for tests and docs.
    template: dict[str, Any]

    def __init__(
        self,
        name: str,
        args: TrainingJobTemplateArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        team: TeamNamespace | None = None,
    ) -> None:
        """`team`: the k8s.TeamNamespace the runs go in; its namespace is used, and the
        ServiceAccount is checked to be one of its accounts."""

        def checks(args: TrainingJobTemplateArgs) -> dict[str, Any]:
            _check(name, args, team)
            return render(args, args.run_name or name)

        args, template = TrainingJobTemplateArgs.validate_with(args, checks, where=name)
        super().__init__("aistack:index:K8sTrainingJobTemplate", name, None, opts)
        self.args = args
        self.template = template
        # _check made sure one of the two is given.
        namespace: pulumi.Input[str] = args.namespace or team.namespace_name  # type: ignore[union-attr]
        self.namespace = pulumi.Output.from_input(namespace)

        def data(namespace: str) -> dict[str, str]:
            document = json.loads(json.dumps(template))
            document["metadata"]["namespace"] = namespace
            return {DATA_KEY: json.dumps(document, indent=2, sort_keys=False) + "\n"}

        self.config_map = k8s.core.v1.ConfigMap(
            f"{name}-template",
            metadata={
                "name": f"aistack-job-{args.run_name or name}",
                "namespace": self.namespace,
                "labels": labels_for(
                    args.governance, workload=args.service_account, **{"job-template": args.kind}
                ),
                "annotations": annotations_for(
                    args.governance,
                    purpose="Training run template; submit it with the "
                    "component's submit_command output.",
                ),
            },
            data=self.namespace.apply(data),
            opts=child_opts(self, depends_on=[team] if team is not None else None),
        )
        self.config_map_name = self.config_map.metadata.apply(lambda meta: str(meta.name))
        self.submit_command = pulumi.Output.all(self.namespace, self.config_map_name).apply(
            lambda values: submit_command(values[0], values[1], args.config_file)
        )
        self.register_outputs(
            {
                "config_map_name": self.config_map_name,
                "namespace": self.namespace,
                "submit_command": self.submit_command,
            }
        )


def _check_storage_reachable(
    name: str, args: TrainingJobTemplateArgs, team: TeamNamespace, account: Any, problems: Problems
) -> None:
    """A run reads its dataset and writes checkpoints as its ServiceAccount: it needs a
    cloud identity (no keys, C6) and HTTPS through the namespace's default-deny, or its
    first copy fails (AIS-C6-19 judges the same on the graph)."""
    if account.identity == "none":
        problems.add(
            f"{name}.serviceAccount",
            f"{args.service_account!r} has no cloud identity, so runs cannot read "
            f"{args.dataset_uri} or write {args.checkpoint_uri}.",
            "give the TeamNamespace's ServiceAccount an identity (gke-workload-identity, "
            "eks-pod-identity or eks-irsa) with an account that may use both buckets.",
        )
    if not any(443 in allowed.ports for allowed in team.args.allow_egress):
        problems.add(
            f"{name}.team",
            "the training namespace allows no egress on port 443 beyond DNS, so runs cannot "
            f"reach {args.dataset_uri} through its default-deny policy.",
            "add allowEgress to the TeamNamespace: the storage API's range (Google APIs "
            "199.36.153.8/30 through Private Google Access, or the VPC endpoints' subnet).",
        )


def _check(name: str, args: TrainingJobTemplateArgs, team: TeamNamespace | None) -> None:
    problems = Problems()
    if team is None and args.namespace is None:
        problems.add(
            f"{name}.namespace",
            "is required without team=.",
            "pass the TeamNamespace as team=, or name its namespace.",
        )
    if team is not None:
        accounts = {account.name: account for account in team.args.service_accounts}
        if args.service_account not in accounts:
            problems.add(
                f"{name}.serviceAccount",
                f"{args.service_account!r} is not a ServiceAccount of the team namespace.",
                f"use one of {sorted(accounts) or 'none (add a serviceAccounts entry)'}.",
            )
        else:
            _check_storage_reachable(name, args, team, accounts[args.service_account], problems)
        if team.args.gpus < args.gpus_per_node * args.nodes:
            problems.add(
                f"{name}.gpusPerNode",
                f"a run needs {args.gpus_per_node * args.nodes} GPUs, above the namespace's "
                f"quota of {team.args.gpus}: Kueue would never admit it.",
                "lower nodes or gpusPerNode, or raise the TeamNamespace's gpus.",
            )
    for key in args.environment:
        if not _ENV_NAME.match(key):
            problems.add(
                f"{name}.environment.{key}",
                "is not an environment variable name.",
                "use letters, digits and _, not starting with a digit.",
            )
        elif key.startswith(_RESERVED_ENV_PREFIX) or key == "HOME":
            problems.add(
                f"{name}.environment.{key}",
                "is set by the template itself (the run manifest, checkpoints, caches).",
                "rename it.",
            )
    shm = parse_quantity(f"{args.shared_memory_gib}Gi")
    if shm >= parse_quantity(args.memory):
        # A memory-backed emptyDir is charged to the pod's memory (Kubernetes docs,
        # "Volumes", emptyDir medium Memory): a full /dev/shm would OOM-kill the trainer.
        problems.add(
            f"{name}.sharedMemoryGib",
            f"{args.shared_memory_gib}Gi of /dev/shm is not below the pod's memory "
            f"{args.memory}, which it counts against.",
            "lower sharedMemoryGib or raise memory.",
        )
    problems.raise_if_any()


# ---- rendering ----------------------------------------------------------------------------


def render(args: TrainingJobTemplateArgs, run_name: str) -> dict[str, Any]:
    """The Job (nodes == 1) or JobSet as the API takes it, without its namespace, through
    the typed models (a field the API lacks is a ConfigError here)."""
    deadline = args.max_runtime_minutes * 60
    labels = {
        **labels_for(args.governance, workload=args.service_account),
        "aistack.dev/run-id": PLACEHOLDERS["AISTACK_RUN_ID"],
        "aistack.dev/dataset-version": args.dataset_version,
    }
    object_labels = {
        **labels,
        KUEUE_QUEUE_LABEL: args.queue,
        KUEUE_MAX_EXEC_TIME_LABEL: str(deadline),
        **({KUEUE_PRIORITY_LABEL: args.priority_class} if args.priority_class else {}),
    }
    annotations = {
        **annotations_for(args.governance),
        "aistack.dev/seed": PLACEHOLDERS["AISTACK_SEED"],
        "aistack.dev/code-commit": PLACEHOLDERS["AISTACK_CODE_COMMIT"],
        "aistack.dev/config-hash": PLACEHOLDERS["AISTACK_CONFIG_HASH"],
    }
    metadata = m.ObjectMeta(
        generate_name=f"{run_name}-", labels=object_labels, annotations=annotations
    )
    ttl = args.keep_finished_hours * 3600
    if args.kind == "Job":
        job = m.Job(
            metadata=metadata,
            spec=_job_spec(args, labels, role=None, deadline=deadline, ttl=ttl),
        )
        return m.dump(job)
    leader = _job_spec(args, labels, role="leader", deadline=deadline, ttl=None)
    workers = _job_spec(args, labels, role="worker", deadline=deadline, ttl=None)
    jobset = m.JobSet(
        metadata=metadata,
        spec=m.JobSetSpec(
            # Kueue admits the JobSet as one workload; suspend: true so that nothing runs
            # before it does, even where Kueue's webhook is missing.
            suspend=True,
            ttl_seconds_after_finished=ttl,
            network=m.Network(enable_dns_hostnames=True),
            failure_policy=m.FailurePolicy(
                max_restarts=args.max_retries,
                restart_strategy="Recreate",
                rules=[
                    # A child Job failed because one of its pods was disrupted (its
                    # podFailurePolicy fails it at once so the whole gang restarts from
                    # the checkpoint): restart without counting it (T2). This is not
                    # bounded by maxRestarts, so the run's deadline bounds it (T5).
                    m.FailurePolicyRule(
                        name="disrupted",
                        action="RestartJobSetAndIgnoreMaxRestarts",
                        on_job_failure_reasons=["PodFailurePolicy"],
                        on_job_failure_message_patterns=[_DISRUPTION_MESSAGE],
                    ),
                    # Anything else: restarted at most maxRestarts times.
                    m.FailurePolicyRule(name="failed", action="RestartJobSet"),
                ],
            ),
            replicated_jobs=[
                m.ReplicatedJob(name="leader", replicas=1, template=m.JobTemplate(spec=leader)),
                m.ReplicatedJob(name="workers", replicas=1, template=m.JobTemplate(spec=workers)),
            ],
        ),
    )
    return m.dump(jobset)


def _job_spec(
    args: TrainingJobTemplateArgs,
    labels: dict[str, str],
    *,
    role: Literal["leader", "worker"] | None,
    deadline: int,
    ttl: int | None,
) -> m.JobSpec:
    pods = 1 if role in (None, "leader") else args.nodes - 1
    if role is None:
        # A lone Job retries its pod: disruptions are not counted, other failures are
        # (restartPolicy Never is what podFailurePolicy requires).
        backoff_limit = args.max_retries
        rules = [
            m.PodFailurePolicyRule(
                action="Ignore",
                on_pod_conditions=[m.PodCondition(type="DisruptionTarget", status="True")],
            )
        ]
    else:
        # In a gang, one lost pod stalls the others: fail the child Job at once, and let
        # the JobSet's failure policy restart all of it (jobset
        # site/static/examples/failure-policy/host-maintenance-event-model.yaml).
        backoff_limit = 0
        rules = [
            m.PodFailurePolicyRule(
                action="FailJob",
                on_pod_conditions=[m.PodCondition(type="DisruptionTarget", status="True")],
            )
        ]
    return m.JobSpec(
        parallelism=pods,
        completions=pods,
        completion_mode="Indexed",
        backoff_limit=backoff_limit,
        active_deadline_seconds=deadline,
        ttl_seconds_after_finished=ttl,
        suspend=True if role is None else None,
        pod_failure_policy=m.PodFailurePolicy(rules=rules),
        template=m.PodTemplate(
            metadata=m.ObjectMeta(
                labels={**labels, **({"aistack.dev/role": role} if role else {})},
                annotations=dict(DO_NOT_DISRUPT),
            ),
            spec=_pod_spec(args, role),
        ),
    )


def _environment(args: TrainingJobTemplateArgs, role: str | None) -> list[m.EnvVar]:
    run_id = PLACEHOLDERS["AISTACK_RUN_ID"]
    values: dict[str, str] = {
        **dict(sorted(args.environment.items())),
        # The run manifest (D4, E3, E4): the same names as aws.TrainingPool's jobs.
        **{name: marker for name, marker in PLACEHOLDERS.items()},
        "AISTACK_DATASET_URI": f"{args.dataset_uri.rstrip('/')}/{args.dataset_version}",
        "AISTACK_DATASET_VERSION": args.dataset_version,
        "AISTACK_DATASET_CACHE": f"{CACHE}/datasets/{args.dataset_version}",
        # Checkpoints and resume (T1, E5): the trainer writes under its run's prefix and,
        # on every start, resumes from the newest checkpoint there if there is one; a
        # retried pod, a restarted JobSet and a resubmission with the same RUN_ID all
        # continue the same run.
        "AISTACK_CHECKPOINT_URI": args.checkpoint_uri.rstrip("/"),
        "AISTACK_RUN_CHECKPOINT_URI": f"{args.checkpoint_uri.rstrip('/')}/{run_id}",
        "AISTACK_CHECKPOINT_DIR": f"{CACHE}/checkpoints",
        "AISTACK_RESUME": "latest",
        "AISTACK_CHECKPOINT_SIGNAL": args.checkpoint_signal,
        "AISTACK_MAX_RUNTIME_MINUTES": str(args.max_runtime_minutes),
        "AISTACK_NUM_NODES": str(args.nodes),
        "HOME": HOME,
        "XDG_CACHE_HOME": f"{HOME}/.cache",
    }
    if args.tracker_uri:
        values["AISTACK_TRACKER_URI"] = args.tracker_uri
    env = [m.EnvVar(name=key, value=value) for key, value in values.items()]
    if role is not None:
        # Rank 0 is the leader; worker i (JOB_COMPLETION_INDEX, set by Kubernetes for
        # Indexed Jobs) is rank i + 1. The leader is reachable at
        # <jobset>-leader-0-0.<jobset>: JobSet names pods
        # <jobset>-<replicatedJob>-<jobIndex>-<podIndex> and, with enableDNSHostnames, puts
        # them under a headless Service named like the JobSet (v0.12.0 jobset_types.go,
        # jobset_controller.go GetSubdomain). `$(VAR)` expands an earlier variable.
        env += [
            m.EnvVar(name="AISTACK_ROLE", value=role),
            m.EnvVar(
                name="AISTACK_JOBSET_NAME",
                value_from=m.EnvVarSource(
                    field_ref=m.FieldRef(field_path=f"metadata.labels['{_JOBSET_NAME_LABEL}']")
                ),
            ),
            m.EnvVar(
                name="AISTACK_RESTART_ATTEMPT",
                value_from=m.EnvVarSource(
                    field_ref=m.FieldRef(field_path=f"metadata.annotations['{_JOBSET_RESTARTS}']")
                ),
            ),
            m.EnvVar(
                name="AISTACK_LEADER_ADDRESS",
                value="$(AISTACK_JOBSET_NAME)-leader-0-0.$(AISTACK_JOBSET_NAME)",
            ),
        ]
    return env


def _pod_spec(args: TrainingJobTemplateArgs, role: str | None) -> m.PodSpec:
    disk_gib = args.dataset_cache_gib + args.tmp_gib + args.home_gib
    resources = {"cpu": args.cpu, "memory": args.memory}
    if args.gpus_per_node:
        resources[args.gpu_resource] = str(args.gpus_per_node)
    # The preStop hook signals the trainer, then waits out the grace period so the
    # kubelet's own SIGTERM (sent when the hook returns) does not arrive mid-checkpoint.
    pre_stop = (
        f"kill -s {args.checkpoint_signal} 1 2>/dev/null; sleep {args.termination_grace_seconds}"
    )
    return m.PodSpec(
        restart_policy="Never",
        priority_class_name=args.priority_class_name,
        service_account_name=args.service_account,
        automount_service_account_token=args.api_token,
        enable_service_links=False,
        termination_grace_period_seconds=args.termination_grace_seconds,
        security_context=m.PodSecurityContext(
            run_as_non_root=True,
            run_as_user=args.run_as_user,
            run_as_group=args.run_as_user,
            fs_group=args.run_as_user,
            seccomp_profile=m.Seccomp(type="RuntimeDefault"),
        ),
        containers=[
            m.Container(
                name="trainer",
                image=args.image,
                # With a digest, Always only re-checks the manifest: the layers are cached.
                image_pull_policy="Always",
                command=list(args.command),
                args=list(args.args) or None,
                env=_environment(args, role),
                resources=m.Resources(
                    requests={**resources, EPHEMERAL_STORAGE: f"{disk_gib}Gi"},
                    limits=dict(resources),
                ),
                security_context=m.SecurityContext(
                    allow_privilege_escalation=False,
                    privileged=False,
                    read_only_root_filesystem=True,
                    run_as_non_root=True,
                    run_as_user=args.run_as_user,
                    run_as_group=args.run_as_user,
                    capabilities=m.Capabilities(drop=["ALL"]),
                    seccomp_profile=m.Seccomp(type="RuntimeDefault"),
                ),
                volume_mounts=[
                    m.VolumeMount(name="cache", mount_path=CACHE),
                    m.VolumeMount(name="tmp", mount_path="/tmp"),  # noqa: S108 - a volume
                    m.VolumeMount(name="home", mount_path=HOME),
                    m.VolumeMount(name="dshm", mount_path="/dev/shm"),
                ],
                lifecycle=m.Lifecycle(
                    pre_stop=m.LifecycleHandler(
                        exec=m.ExecAction(command=["/bin/sh", "-c", pre_stop])
                    )
                ),
            )
        ],
        volumes=[
            # Node-local disk (D3): on NVMe when the pool puts it under the kubelet.
            m.Volume(name="cache", empty_dir=m.EmptyDir(size_limit=f"{args.dataset_cache_gib}Gi")),
            m.Volume(name="tmp", empty_dir=m.EmptyDir(size_limit=f"{args.tmp_gib}Gi")),
            m.Volume(name="home", empty_dir=m.EmptyDir(size_limit=f"{args.home_gib}Gi")),
            m.Volume(
                name="dshm",
                empty_dir=m.EmptyDir(medium="Memory", size_limit=f"{args.shared_memory_gib}Gi"),
            ),
        ],
    )


# ---- submitting ---------------------------------------------------------------------------


def submit_command(namespace: str, config_map: str, config_file: str = "config.yaml") -> str:
    """The shell command that submits one run: it takes RUN_ID and SEED from the caller's
    environment (as aws.TrainingPool's does), the commit from git and the config hash from
    `config_file`, fills them into the template and creates a new object with a generated
    name. The same RUN_ID again resumes that run from its checkpoints.

    POSIX sh (bash, zsh, dash): `${VAR:?}` stops with a message when a value is missing;
    values are limited to label characters, which keeps `sed` and the JSON intact."""
    fill = " ".join(
        f'-e "s/{marker}/${variable.removeprefix("AISTACK_")}/g"'
        for variable, marker in PLACEHOLDERS.items()
    )
    quoted = config_file.replace("'", "'\\''")
    jsonpath = "{.data." + DATA_KEY.replace(".", "\\.") + "}"
    return (
        ': "${RUN_ID:?set RUN_ID: a new id, or an earlier one to resume it}" '
        '"${SEED:?set SEED}" && '
        'CODE_COMMIT="$(git rev-parse HEAD)" && '
        f"CONFIG_HASH=\"$(sha256sum '{quoted}' | cut -c1-12)\" && "
        'case "$RUN_ID$SEED" in '
        "*[!A-Za-z0-9._-]*) echo 'aistack: RUN_ID and SEED take letters, digits, . _ - only' "
        ">&2 ;; "
        f"*) kubectl get configmap {config_map} --namespace {namespace} "
        f"-o jsonpath='{jsonpath}' | sed {fill} | "
        f"kubectl create --namespace {namespace} -f - ;; "
        "esac"
    )
