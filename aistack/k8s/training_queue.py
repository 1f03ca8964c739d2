"""`k8s.TrainingQueue`: a Kueue queue in front of the GPU node pools, with a hard GPU quota.

What it creates, and why (docs/components/k8s/training-queue.md says more):

- a ResourceFlavor per capacity type the pools offer (Spot, on-demand), with the node
  labels and tolerations Kueue puts on a job's pods when it admits them to that flavor;
- one ClusterQueue whose GPU nominal quota per flavor is the pools' maximum, never
  "infinite", trying Spot before on-demand, CPU and memory quota'd too, open only to the
  team namespaces, preempting lower-priority work within the queue (C3: the cap Kubernetes
  enforces; T2: preempted jobs are requeued, not lost);
- a LocalQueue per team namespace, named explicitly: jobs name it in the
  `kueue.x-k8s.io/queue-name` label;
- WorkloadPriorityClasses for training jobs, and scheduling PriorityClasses that put
  serving pods above training pods (S1);
- no `stopPolicy` unless asked: the kill switch sets it (`stop_command`), and a stack that
  does not own the field does not undo it on the next `pulumi up`.

Kueue's API version is an argument: `v1beta2` (Kueue >= 0.15, the storage version from
0.16) by default, `v1beta1` for older Kueue. The only field aistack renders that differs is
the cohort (`cohortName` on v1beta2, `cohort` on v1beta1). Every object is checked against
the CRDs of the pinned release (KUEUE_VERSION, kept under aistack/scan/data/crds/).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes import _utilities as k8s_utilities
from pydantic import Field, field_validator

from aistack.config import AistackModel, Governance
from aistack.contracts.k8s import (
    CAPACITY_LABEL,
    EPHEMERAL_STORAGE,
    KUEUE_GROUP,
    MAX_QUEUE_GPUS,
    canonical_quantity,
    parse_quantity,
    scale_quantity,
)
from aistack.errors import Problems
from aistack.k8s._base import annotations_for, child_opts, labels_for

__all__ = [
    "KUEUE_VERSION",
    "MAX_GPUS_PER_FLAVOR",
    "FlavorToleration",
    "QueueFlavor",
    "TrainingQueue",
    "TrainingQueueArgs",
]

#: The Kueue release whose CRDs aistack renders for and validates against
#: (aistack/scan/data/crds/kueue-v0.19.2/, kubernetes-sigs/kueue tag v0.19.2). It serves
#: v1beta2 (storage) and v1beta1 (`deprecated: true`). v1beta1 as Kueue v0.14.8 (the last
#: release without v1beta2) serves it differs from v0.19.2's v1beta1 only in
#: `spec.flavorFungibility`, which aistack does not render (compared field by field).
KUEUE_VERSION = "v0.19.2"

#: The most GPUs one flavor may declare: a pool's maximum is a decision and a cost cap, and
#: ai-on-gke's 1000000000 ("Infinite" quota) is none (aistack.queries.k8s.MAX_QUEUE_GPUS).
MAX_GPUS_PER_FLAVOR = MAX_QUEUE_GPUS

#: apimachinery IsDNS1123Subdomain: Kueue object names (the CRDs' ResourceFlavorReference,
#: ClusterQueueReference patterns), at most 253; namespace names are DNS-1123 labels.
_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
_RESOURCE = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"

KueueApi = Literal["v1beta2", "v1beta1"]


class FlavorToleration(AistackModel):
    """A toleration Kueue adds to the pods it admits to a flavor. The ResourceFlavor CRD
    (v0.19.2, spec.tolerations x-kubernetes-validations) allows operators Equal and Exists
    only, and no value with Exists."""

    key: str = Field(min_length=1, description="The taint key, e.g. nvidia.com/gpu.")
    operator: Literal["Equal", "Exists"] = Field("Equal", description="Equal or Exists.")
    value: str | None = Field(None, description="The taint value (Equal only).")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = Field(
        None, description="The taint effect; none matches every effect."
    )


class QueueFlavor(AistackModel):
    """One capacity type of the GPU pools: what a pool's `kueue_flavors()` returns, or a
    hand-written flavor for a cluster whose pools aistack does not manage."""

    name: str = Field(
        max_length=253,
        pattern=_DNS_SUBDOMAIN,
        description="The ResourceFlavor's name (cluster-scoped, explicit), e.g. 'gpu-spot'.",
    )
    capacity: Literal["spot", "on-demand"] = Field(
        description="Spot or on-demand: Spot flavors are tried first."
    )
    node_labels: dict[str, str] = Field(
        min_length=1,
        max_length=8,
        description="Labels of the pool's nodes; Kueue adds them to the nodeSelector of the "
        "pods it admits to this flavor (at most 8: the CRD's maxProperties).",
    )
    tolerations: tuple[FlavorToleration, ...] = Field(
        (),
        max_length=8,
        description="Tolerations for the pool's taints; Kueue adds them to admitted pods.",
    )
    gpus: int = Field(
        ge=0,
        description="The pool's maximum GPUs of this capacity: the flavor's GPU nominal quota.",
    )
    gpu_resource: str = Field(
        "nvidia.com/gpu", pattern=_RESOURCE, description="The device plugin's resource name."
    )
    cpu: str | None = Field(
        None, description="CPU quota of this flavor. Default: gpus x the queue's cpuPerGpu."
    )
    memory: str | None = Field(
        None, description="Memory quota of this flavor. Default: gpus x the queue's memoryPerGpu."
    )
    ephemeral_storage: str | None = Field(
        None,
        description="Node-local disk quota of this flavor (the pools' NVMe or local SSD under "
        "the kubelet, summed over its nodes): job templates request their cache, /tmp and "
        "home as ephemeral-storage. Default: gpus x the queue's ephemeralStoragePerGpu.",
    )

    @field_validator("cpu", "memory", "ephemeral_storage")
    @classmethod
    def _is_quantity(cls, text: str | None) -> str | None:
        if text is not None:
            try:
                parse_quantity(text)
            except ValueError as error:
                raise ValueError(f"{error}. Fix: write e.g. '96' or '384Gi'.") from None
        return text


class TrainingQueueArgs(AistackModel):
    governance: Governance
    api_version: KueueApi = Field(
        "v1beta2",
        description="The Kueue API version to render: v1beta2 (Kueue >= 0.15; the storage "
        "version from 0.16) or v1beta1 for older Kueue.",
    )
    cluster_queue_name: str | None = Field(
        None,
        max_length=253,
        pattern=_DNS_SUBDOMAIN,
        description="The ClusterQueue's name (cluster-scoped, explicit). Default: the "
        "component's name.",
    )
    local_queue_name: str | None = Field(
        None,
        max_length=253,
        pattern=_DNS_SUBDOMAIN,
        description="The LocalQueue's name in every team namespace, which jobs put in the "
        "kueue.x-k8s.io/queue-name label. Default: the ClusterQueue's name.",
    )
    namespaces: tuple[str, ...] = Field(
        min_length=1,
        description="The team namespaces that may submit to the queue (names, or "
        "k8s.TeamNamespace components): each gets a LocalQueue, and the ClusterQueue's "
        "namespaceSelector admits these and no other.",
    )
    flavors: tuple[QueueFlavor, ...] = Field(
        min_length=1,
        description="The pools' capacity types (`pool.kueue_flavors()`, or hand-written).",
    )
    cpu_per_gpu: str = Field(
        "8", description="CPU quota per GPU for flavors that give no `cpu` of their own."
    )
    memory_per_gpu: str = Field(
        "64Gi", description="Memory quota per GPU for flavors that give no `memory`."
    )
    ephemeral_storage_per_gpu: str = Field(
        "375G",
        description="Node-local disk quota per GPU for flavors that give none (one GCE local "
        "SSD, 375 GB, per GPU). Pools' kueue_flavors() give their nodes' own disk.",
    )
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = Field(
        "BestEffortFIFO",
        description="BestEffortFIFO (default): a job that does not fit does not block "
        "smaller ones behind it. StrictFIFO: creation order, strictly.",
    )
    preemption: Literal["LowerPriority", "LowerOrNewerEqualPriority", "Never"] = Field(
        "LowerPriority",
        description="`preemption.withinClusterQueue`: a pending job may evict running jobs "
        "of lower priority in this queue (which Kueue requeues).",
    )
    cohort: str | None = Field(
        None,
        max_length=253,
        pattern=_DNS_SUBDOMAIN,
        description="A cohort to lend unused quota to and reclaim it from (rendered "
        "cohortName on v1beta2, cohort on v1beta1). Default: none, so the queue never "
        "admits more than its own nominal quota.",
    )
    stop_policy: Literal["Hold", "HoldAndDrain"] | None = Field(
        None,
        description="Stop the queue from the stack: Hold (no new admissions) or "
        "HoldAndDrain (also evict running jobs). Default: not rendered, so the kill "
        "switch's patch (stop_command) is not undone by the next deploy.",
    )
    workload_priorities: dict[str, int] = Field(
        default_factory=lambda: {"high": 1000, "low": 100},
        min_length=1,
        description="WorkloadPriorityClasses for training jobs, named "
        "`<clusterQueue>-<key>`; jobs pick one with the kueue.x-k8s.io/priority-class "
        "label. Higher preempts lower within the queue.",
    )
    serving_priority: int = Field(
        100_000,
        ge=1,
        le=1_000_000_000,
        description="Value of the `<clusterQueue>-serving` PriorityClass, above training: "
        "on shared nodes the scheduler evicts training pods before serving pods (S1). At "
        "most 1000000000 (user-defined PriorityClass limit; higher is reserved).",
    )
    training_priority: int = Field(
        1000,
        ge=0,
        le=1_000_000_000,
        description="Value of the `<clusterQueue>-training` PriorityClass "
        "(preemptionPolicy Never: training pods wait, Kueue decides preemption).",
    )

    @field_validator("namespaces")
    @classmethod
    def _are_namespaces(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        bad = [n for n in names if not re.fullmatch(_DNS_LABEL, n)]
        if bad:
            raise ValueError(f"{bad} are not namespace names. Fix: DNS-1123 labels.")
        return names

    @field_validator("cpu_per_gpu", "memory_per_gpu", "ephemeral_storage_per_gpu")
    @classmethod
    def _is_quantity(cls, text: str) -> str:
        try:
            parse_quantity(text)
        except ValueError as error:
            raise ValueError(f"{error}. Fix: write e.g. '8' or '64Gi'.") from None
        return text


class _KueueObject(pulumi.CustomResource):
    """A custom resource with top-level fields besides `spec` (a WorkloadPriorityClass has
    `value` and `description`), which `apiextensions.CustomResource` cannot pass in Python.
    pulumi-kubernetes sends a custom resource's inputs as the object, whatever its fields,
    under the type `kubernetes:<apiVersion>:<Kind>` (as CustomResource registers)."""

    def __init__(
        self, name: str, document: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> None:
        opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(version=k8s_utilities.get_version())
        )
        super().__init__(
            f"kubernetes:{document['apiVersion']}:{document['kind']}", name, document, opts
        )


class TrainingQueue(pulumi.ComponentResource):
    """A Kueue ClusterQueue capped at the GPU pools' maximum, a LocalQueue per team."""

    args: TrainingQueueArgs
    cluster_queue_name: str
    resource_flavors: dict[str, k8s.apiextensions.CustomResource]
    cluster_queue: k8s.apiextensions.CustomResource
    local_queues: dict[str, k8s.apiextensions.CustomResource]
    local_queue_names: dict[str, str]
    workload_priority_classes: dict[str, pulumi.CustomResource]
    priority_classes: dict[str, k8s.scheduling.v1.PriorityClass]
    stop_command: str
    resume_command: str

    @classmethod
    def check_args(cls, name: str, args: TrainingQueueArgs | dict) -> TrainingQueueArgs:
        """The checks the component runs before registering anything, without registering
        anything: a stack validates every block first (aistack.config.parse_all)."""
        return cls._validated(name, args)[0]

    @staticmethod
    def _validated(
        name: str, args: TrainingQueueArgs | dict
    ) -> tuple[TrainingQueueArgs, Mapping[str, Any]]:
        raw = args.model_dump(by_alias=True) if isinstance(args, TrainingQueueArgs) else args
        raw, teams = _namespaces_from_teams(raw)

        def checks(parsed: TrainingQueueArgs) -> None:
            _check(name, parsed, teams)

        return TrainingQueueArgs.validate_with(raw, checks, where=name)[0], teams

    def __init__(
        self,
        name: str,
        args: TrainingQueueArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`args.namespaces` may hold `k8s.TeamNamespace` components as well as names: the
        LocalQueue then waits for that Namespace to exist."""
        args, teams = self._validated(name, args)
        super().__init__("aistack:index:K8sTrainingQueue", name, None, opts)
        self.args = args
        api = f"{KUEUE_GROUP}/{args.api_version}"
        queue = args.cluster_queue_name or name
        local_name = args.local_queue_name or queue
        self.cluster_queue_name = queue
        governance = args.governance
        labels = labels_for(governance, workload="training", queue=queue)
        annotations = annotations_for(governance)
        opts_in = child_opts(self)

        def metadata(object_name: str, **extra: str) -> Any:
            return {
                "name": object_name,
                "labels": labels,
                "annotations": {**annotations, **extra},
            }

        self.resource_flavors = {}
        for flavor in _ordered(args.flavors):
            self.resource_flavors[flavor.name] = k8s.apiextensions.CustomResource(
                f"{name}-flavor-{flavor.name}",
                api_version=api,
                kind="ResourceFlavor",
                metadata=metadata(
                    flavor.name,
                    # The pool's declared maximum, which AIS-C3-08 holds the quota to.
                    **{
                        CAPACITY_LABEL: flavor.capacity,
                        "aistack.dev/max-gpus": str(flavor.gpus),
                    },
                ),
                spec=flavor_spec(flavor),
                opts=opts_in,
            )
        self.cluster_queue = k8s.apiextensions.CustomResource(
            f"{name}-cluster-queue",
            api_version=api,
            kind="ClusterQueue",
            metadata=metadata(queue),
            spec=cluster_queue_spec(args),
            opts=child_opts(self, depends_on=list(self.resource_flavors.values())),
        )
        self.local_queues = {}
        for namespace in args.namespaces:
            team = teams.get(namespace)
            self.local_queues[namespace] = k8s.apiextensions.CustomResource(
                f"{name}-local-{namespace}",
                api_version=api,
                kind="LocalQueue",
                metadata={**metadata(local_name), "namespace": namespace},
                spec={"clusterQueue": queue},
                opts=child_opts(
                    self,
                    depends_on=[self.cluster_queue, *([team.namespace] if team else [])],
                ),
            )
        self.local_queue_names = {namespace: local_name for namespace in args.namespaces}

        self.workload_priority_classes = {}
        for key, value in sorted(args.workload_priorities.items(), key=lambda kv: -kv[1]):
            self.workload_priority_classes[key] = _KueueObject(
                f"{name}-priority-{key}",
                {
                    "apiVersion": api,
                    "kind": "WorkloadPriorityClass",
                    "metadata": metadata(f"{queue}-{key}"),
                    "value": value,
                    "description": f"Training jobs of queue {queue}, priority {key!r}.",
                },
                opts_in,
            )
        self.priority_classes = {
            "serving": k8s.scheduling.v1.PriorityClass(
                f"{name}-serving-priority",
                metadata=metadata(f"{queue}-serving"),
                value=args.serving_priority,
                preemption_policy="PreemptLowerPriority",
                description="Serving pods: scheduled before, and evicting, training pods (S1).",
                opts=opts_in,
            ),
            "training": k8s.scheduling.v1.PriorityClass(
                f"{name}-training-priority",
                metadata=metadata(f"{queue}-training"),
                value=args.training_priority,
                # Training pods never evict others in the scheduler: Kueue admits and
                # preempts training workloads by their WorkloadPriorityClass.
                preemption_policy="Never",
                description="Training pods: below serving, never preempting in the scheduler.",
                opts=opts_in,
            ),
        }
        self.workload_priority_class_names = {
            key: f"{queue}-{key}" for key in self.workload_priority_classes
        }
        self.priority_class_names = {key: f"{queue}-{key}" for key in self.priority_classes}
        self.stop_command = stop_command(queue, "HoldAndDrain")
        self.resume_command = stop_command(queue, "None")
        self.register_outputs(
            {
                "cluster_queue_name": queue,
                "local_queue_names": self.local_queue_names,
                "workload_priority_class_names": self.workload_priority_class_names,
                "priority_class_names": self.priority_class_names,
                "stop_command": self.stop_command,
                "resume_command": self.resume_command,
            }
        )


def stop_command(queue: str, policy: str) -> str:
    """The kubectl command that sets a ClusterQueue's stopPolicy (Kueue docs, "Cluster
    Queue" > StopPolicy; "Troubleshooting: delete a ClusterQueue" sets HoldAndDrain by
    editing the object, which this merge patch does without an editor)."""
    patch = json.dumps({"spec": {"stopPolicy": policy}}, separators=(",", ":"))
    return f"kubectl patch clusterqueues.{KUEUE_GROUP} {queue} --type=merge -p '{patch}'"


def _namespaces_from_teams(raw: Any) -> tuple[Any, dict[str, Any]]:
    """Args with every `k8s.TeamNamespace` in `namespaces` replaced by its namespace name,
    and those components by name."""
    from aistack.k8s.team_namespace import TeamNamespace

    if not isinstance(raw, Mapping):
        return raw, {}
    given = raw.get("namespaces")
    if not isinstance(given, Sequence) or isinstance(given, str):
        return raw, {}
    teams: dict[str, Any] = {}
    names: list[Any] = []
    for item in given:
        if isinstance(item, TeamNamespace):
            namespace = item.args.namespace or item.pulumi_resource_name
            teams[namespace] = item
            names.append(namespace)
        else:
            names.append(item)
    return {**raw, "namespaces": names}, teams


def _ordered(flavors: Sequence[QueueFlavor]) -> list[QueueFlavor]:
    """Spot first, then on-demand, each in the order given: Kueue assigns the first flavor
    in `resourceGroups[].flavors` with enough unused quota (Kueue docs, "Cluster Queue" >
    Flavors and Resources), so cheap capacity is used before the fallback."""
    return sorted(flavors, key=lambda f: f.capacity != "spot")


def _quota(total: str | None, per_gpu: str, gpus: int) -> str:
    # Canonical, as Kueue's webhook writes the spec back: any other spelling ("3000G" for
    # "3T") is a diff on every later `pulumi up` (seen through the real engine, e2e/).
    if total is not None:
        return canonical_quantity(total)
    return scale_quantity(per_gpu, gpus)


def flavor_spec(flavor: QueueFlavor) -> dict[str, Any]:
    """The ResourceFlavor spec: node labels Kueue adds to admitted pods' nodeSelector and
    tolerations it adds to their tolerations (Kueue docs, "Resource Flavor": "Kueue adds the
    ResourceFlavor labels to the .nodeSelector" and "adds the tolerations")."""
    spec: dict[str, Any] = {"nodeLabels": dict(flavor.node_labels)}
    if flavor.tolerations:
        spec["tolerations"] = [
            t.model_dump(exclude_none=True, by_alias=True) for t in flavor.tolerations
        ]
    return spec


def cluster_queue_spec(args: TrainingQueueArgs) -> dict[str, Any]:
    """The ClusterQueue spec, for either API version."""
    flavors = _ordered(args.flavors)
    gpu_resources = sorted({f.gpu_resource for f in flavors})
    # Every resource a pod requests must be covered, or Kueue does not admit the job:
    # "resource ephemeral-storage unavailable in ClusterQueue" at the default quota check
    # (Kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go:1071; the check skips
    # only zero requests, :802-813). Pods always request CPU and memory (TeamNamespace's
    # LimitRange gives defaults), and job templates their node-local disk (D3). Each
    # flavor lists every covered resource in the same order (CRD: "flavors must have the
    # same number of resources as the coveredResources").
    covered = ["cpu", "memory", EPHEMERAL_STORAGE, *gpu_resources]
    spec: dict[str, Any] = {
        # kubernetes.io/metadata.name is the immutable label the control plane sets on
        # every namespace (Kueue docs, "Cluster Queue" > namespaceSelector): exactly the
        # team namespaces, never `{}` (every namespace).
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "In",
                    "values": sorted(args.namespaces),
                }
            ]
        },
        "queueingStrategy": args.queueing_strategy,
        "preemption": {"withinClusterQueue": args.preemption},
        "resourceGroups": [
            {
                "coveredResources": covered,
                "flavors": [
                    {
                        "name": f.name,
                        "resources": [
                            {
                                "name": "cpu",
                                "nominalQuota": _quota(f.cpu, args.cpu_per_gpu, f.gpus),
                            },
                            {
                                "name": "memory",
                                "nominalQuota": _quota(f.memory, args.memory_per_gpu, f.gpus),
                            },
                            {
                                "name": EPHEMERAL_STORAGE,
                                "nominalQuota": _quota(
                                    f.ephemeral_storage, args.ephemeral_storage_per_gpu, f.gpus
                                ),
                            },
                            *(
                                {
                                    "name": resource,
                                    "nominalQuota": str(
                                        f.gpus if resource == f.gpu_resource else 0
                                    ),
                                }
                                for resource in gpu_resources
                            ),
                        ],
                    }
                    for f in flavors
                ],
            }
        ],
    }
    if args.cohort:
        # The field was renamed in v1beta2 (CRD v0.19.2: v1beta1 spec.cohort, v1beta2
        # spec.cohortName); reclaiming lent quota back needs preemption in the cohort.
        spec["cohortName" if args.api_version == "v1beta2" else "cohort"] = args.cohort
        spec["preemption"]["reclaimWithinCohort"] = "Any"
    if args.stop_policy:
        spec["stopPolicy"] = args.stop_policy
    return spec


def _check(name: str, args: TrainingQueueArgs, teams: Mapping[str, Any]) -> None:
    problems = Problems()
    for index, namespace in enumerate(args.namespaces):
        team = teams.get(namespace)
        if team is not None and team.args.tier == "serve":
            problems.add(
                f"{name}.namespaces.{index}",
                f"{namespace!r} is a serving namespace (tier serve).",
                "queue training namespaces only: serving stays apart from training (S1).",
            )
    seen: set[str] = set()
    for index, flavor in enumerate(args.flavors):
        at = f"{name}.flavors.{index}"
        if flavor.name in seen:
            problems.add(f"{at}.name", f"{flavor.name!r} is listed twice.", "name each once.")
        seen.add(flavor.name)
        if flavor.gpus > MAX_GPUS_PER_FLAVOR:
            problems.add(
                f"{at}.gpus",
                f"{flavor.gpus} GPUs is no cap (an 'infinite' quota, as in ai-on-gke's "
                f"1000000000): at most {MAX_GPUS_PER_FLAVOR}.",
                "give the pool's real maximum GPUs of this capacity.",
            )
        if flavor.gpu_resource.split("/", 1)[0].endswith("kubernetes.io"):
            problems.add(
                f"{at}.gpuResource",
                "is in the kubernetes.io domain, which extended resources may not use.",
                "use the device plugin's name, e.g. nvidia.com/gpu.",
            )
        for t_index, toleration in enumerate(flavor.tolerations):
            if toleration.operator == "Exists" and toleration.value:
                # ResourceFlavor CRD: "a value must be empty when 'operator' is 'Exists'".
                problems.add(
                    f"{at}.tolerations.{t_index}.value",
                    "is set with operator Exists, which the ResourceFlavor CRD refuses.",
                    "drop the value, or use operator Equal.",
                )
    if len(args.flavors) > 64:
        problems.add(f"{name}.flavors", "Kueue allows at most 64 flavors.", "merge flavors.")
    if len(set(args.namespaces)) != len(args.namespaces):
        problems.add(f"{name}.namespaces", "lists a namespace twice.", "list each once.")
    queue = args.cluster_queue_name or name
    for key, value in args.workload_priorities.items():
        full = f"{queue}-{key}"
        if len(full) > 253 or not re.fullmatch(_DNS_SUBDOMAIN, full):
            problems.add(
                f"{name}.workloadPriorities.{key}",
                f"{full!r} is not a valid object name.",
                "use lowercase letters, digits and '-'.",
            )
        if not -(2**31) <= value < 2**31:
            problems.add(
                f"{name}.workloadPriorities.{key}",
                f"{value} is outside int32 (the CRD's `value` format).",
                "use a smaller number.",
            )
    if args.training_priority >= args.serving_priority:
        problems.add(
            f"{name}.trainingPriority",
            f"{args.training_priority} is not below servingPriority {args.serving_priority}.",
            "serving must outrank training (S1): lower it.",
        )
    if not _re_match(_DNS_SUBDOMAIN, queue) or len(queue) > 253:
        problems.add(
            f"{name}.clusterQueueName",
            f"{queue!r} (the component's name) is not a valid object name.",
            "set clusterQueueName to a lowercase DNS subdomain.",
        )
    problems.raise_if_any()


def _re_match(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text) is not None
