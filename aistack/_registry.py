"""The one list of aistack's components: each one's token, module, class, Args and page.

Every tool that enumerates the components derives its list from `COMPONENTS` rather than
keeping its own: the lazy exports of `aistack.aws`, `aistack.gcp` and `aistack.k8s`, the
component package's codegen and adapters (components/aistack_components/), and
tests/test_registry.py, which checks each entry against its module (class, Args, token),
its adapter and its page, and fails on a component class missing from here.

Only the standard library is imported, never pulumi nor a component module: the platform
packages read this at import time, and `from aistack import gcp` must stay free (no cloud
SDK is loaded until a component is used).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "COMPONENTS",
    "PLATFORMS",
    "TOKEN_PREFIX",
    "ComponentSpec",
    "Platform",
    "by_platform",
    "by_token",
    "exports",
]

Platform = Literal["aws", "gcp", "k8s"]
PLATFORMS: tuple[Platform, ...] = get_args(Platform)

#: Every token is `aistack:index:<Name>`, the name being the platform's prefix (Aws, Gcp,
#: K8s) and the class's: the component package names its adapter class the same.
TOKEN_PREFIX = "aistack:index:"


@dataclass(frozen=True)
class ComponentSpec:
    """One component, by name only: nothing here imports it."""

    #: The Pulumi type token the component registers (`aistack:index:AwsDatasetBucket`).
    token: str
    platform: Platform
    #: The dotted path of the module defining the component class.
    module: str
    #: The component class's name in `module`.
    cls: str
    #: Its pydantic Args class's name, as `args_module` exports it.
    args: str
    #: Its page, as a path under docs/, in its platform's folder
    #: (`components/aws/dataset-bucket.md`).
    docs_page: str
    #: The module the Args are taken from; left out, `module` (filled in at creation).
    #: Given where the Args are defined in a module of their own: a component package's
    #: `args` (`aistack.aws.network.args`), or `aistack.k8s._inference_args`, which does
    #: not load pulumi_kubernetes, so using `k8s.InferenceServiceArgs` alone stays cheap.
    args_module: str = ""

    def __post_init__(self) -> None:
        # Caught when the registry is imported, so a typo never reaches an export map.
        if self.platform not in PLATFORMS:
            raise ValueError(f"{self.token}: platform {self.platform!r} not in {PLATFORMS}")
        if not self.token.startswith(TOKEN_PREFIX):
            raise ValueError(f"{self.token}: a token starts with {TOKEN_PREFIX!r}")
        for module in (self.module, self.args_module or self.module):
            if not module.startswith(f"aistack.{self.platform}."):
                raise ValueError(f"{self.token}: {module} is not in aistack.{self.platform}")
        folder = f"components/{self.platform}/"
        if not self.docs_page.startswith(folder):
            raise ValueError(f"{self.token}: page {self.docs_page} is not in {folder}")
        if not self.args_module:
            object.__setattr__(self, "args_module", self.module)

    @property
    def name(self) -> str:
        """The token's name (`AwsDatasetBucket`): the component package's key for it."""
        return self.token.removeprefix(TOKEN_PREFIX)


#: In the order the component package renders its args.py (codegen.render_args), so that
#: the generated file stays as it is: AWS, Google Cloud, then Kubernetes.
COMPONENTS: tuple[ComponentSpec, ...] = (
    ComponentSpec(
        token="aistack:index:AwsDatasetBucket",
        platform="aws",
        module="aistack.aws.dataset_bucket",
        cls="DatasetBucket",
        args="DatasetBucketArgs",
        docs_page="components/aws/dataset-bucket.md",
    ),
    ComponentSpec(
        token="aistack:index:AwsWorkloadIdentity",
        platform="aws",
        module="aistack.aws.workload_identity.component",
        cls="WorkloadIdentity",
        args="WorkloadIdentityArgs",
        docs_page="components/aws/workload-identity.md",
        args_module="aistack.aws.workload_identity.args",
    ),
    ComponentSpec(
        token="aistack:index:AwsBudgetGuard",
        platform="aws",
        module="aistack.aws.budget_guard.component",
        cls="BudgetGuard",
        args="BudgetGuardArgs",
        docs_page="components/aws/budget-guard.md",
        args_module="aistack.aws.budget_guard.args",
    ),
    ComponentSpec(
        token="aistack:index:AwsGpuQuota",
        platform="aws",
        module="aistack.aws.gpu_quota",
        cls="GpuQuota",
        args="GpuQuotaArgs",
        docs_page="components/aws/gpu-quota.md",
    ),
    ComponentSpec(
        token="aistack:index:AwsContainerRegistry",
        platform="aws",
        module="aistack.aws.container_registry",
        cls="ContainerRegistry",
        args="ContainerRegistryArgs",
        docs_page="components/aws/container-registry.md",
    ),
    ComponentSpec(
        token="aistack:index:AwsAuditTrail",
        platform="aws",
        module="aistack.aws.audit_trail",
        cls="AuditTrail",
        args="AuditTrailArgs",
        docs_page="components/aws/audit-trail.md",
    ),
    ComponentSpec(
        token="aistack:index:AwsNetwork",
        platform="aws",
        module="aistack.aws.network.component",
        cls="Network",
        args="NetworkArgs",
        docs_page="components/aws/network.md",
        args_module="aistack.aws.network.args",
    ),
    ComponentSpec(
        token="aistack:index:AwsTrainingPool",
        platform="aws",
        module="aistack.aws.training_pool",
        cls="TrainingPool",
        args="TrainingPoolArgs",
        docs_page="components/aws/training-pool.md",
    ),
    ComponentSpec(
        token="aistack:index:AwsNotebook",
        platform="aws",
        module="aistack.aws.notebook",
        cls="Notebook",
        args="NotebookArgs",
        docs_page="components/aws/notebook.md",
    ),
    ComponentSpec(
        token="aistack:index:AwsInferenceTier",
        platform="aws",
        module="aistack.aws.inference.component",
        cls="InferenceTier",
        args="InferenceTierArgs",
        docs_page="components/aws/inference-tier.md",
        args_module="aistack.aws.inference.args",
    ),
    ComponentSpec(
        token="aistack:index:AwsKarpenterGpuPool",
        platform="aws",
        module="aistack.aws.karpenter_gpu_pool",
        cls="KarpenterGpuPool",
        args="KarpenterGpuPoolArgs",
        docs_page="components/aws/karpenter-gpu-pool.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpProjectServices",
        platform="gcp",
        module="aistack.gcp.project_services",
        cls="ProjectServices",
        args="ProjectServicesArgs",
        docs_page="components/gcp/project-services.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpDatasetBucket",
        platform="gcp",
        module="aistack.gcp.dataset_bucket",
        cls="DatasetBucket",
        args="DatasetBucketArgs",
        docs_page="components/gcp/dataset-bucket.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpWorkloadIdentity",
        platform="gcp",
        module="aistack.gcp.workload_identity",
        cls="WorkloadIdentity",
        args="WorkloadIdentityArgs",
        docs_page="components/gcp/workload-identity.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpContainerRegistry",
        platform="gcp",
        module="aistack.gcp.container_registry",
        cls="ContainerRegistry",
        args="ContainerRegistryArgs",
        docs_page="components/gcp/container-registry.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpBudgetGuard",
        platform="gcp",
        module="aistack.gcp.budget_guard",
        cls="BudgetGuard",
        args="BudgetGuardArgs",
        docs_page="components/gcp/budget-guard.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpGpuQuota",
        platform="gcp",
        module="aistack.gcp.gpu_quota",
        cls="GpuQuota",
        args="GpuQuotaArgs",
        docs_page="components/gcp/gpu-quota.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpNetwork",
        platform="gcp",
        module="aistack.gcp.network.component",
        cls="Network",
        args="NetworkArgs",
        docs_page="components/gcp/network.md",
        args_module="aistack.gcp.network.args",
    ),
    ComponentSpec(
        token="aistack:index:GcpGkeCluster",
        platform="gcp",
        module="aistack.gcp.gke_cluster",
        cls="GkeCluster",
        args="GkeClusterArgs",
        docs_page="components/gcp/gke-cluster.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpGpuNodePool",
        platform="gcp",
        module="aistack.gcp.gpu_node_pool",
        cls="GpuNodePool",
        args="GpuNodePoolArgs",
        docs_page="components/gcp/gpu-node-pool.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpNotebook",
        platform="gcp",
        module="aistack.gcp.notebook",
        cls="Notebook",
        args="NotebookArgs",
        docs_page="components/gcp/notebook.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpTrainingPool",
        platform="gcp",
        module="aistack.gcp.training_pool",
        cls="TrainingPool",
        args="TrainingPoolArgs",
        docs_page="components/gcp/training-pool.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpInferenceTier",
        platform="gcp",
        module="aistack.gcp.inference_tier",
        cls="InferenceTier",
        args="InferenceTierArgs",
        docs_page="components/gcp/inference-tier.md",
    ),
    ComponentSpec(
        token="aistack:index:GcpAuditLogs",
        platform="gcp",
        module="aistack.gcp.audit_logs",
        cls="AuditLogs",
        args="AuditLogsArgs",
        docs_page="components/gcp/audit-logs.md",
    ),
    ComponentSpec(
        token="aistack:index:K8sTeamNamespace",
        platform="k8s",
        module="aistack.k8s.team_namespace",
        cls="TeamNamespace",
        args="TeamNamespaceArgs",
        docs_page="components/k8s/team-namespace.md",
    ),
    ComponentSpec(
        token="aistack:index:K8sGpuMonitoring",
        platform="k8s",
        module="aistack.k8s.gpu_monitoring",
        cls="GpuMonitoring",
        args="GpuMonitoringArgs",
        docs_page="components/k8s/gpu-monitoring.md",
    ),
    ComponentSpec(
        token="aistack:index:K8sTrainingJobTemplate",
        platform="k8s",
        module="aistack.k8s.training_job_template",
        cls="TrainingJobTemplate",
        args="TrainingJobTemplateArgs",
        docs_page="components/k8s/training-job-template.md",
    ),
    ComponentSpec(
        token="aistack:index:K8sTrainingQueue",
        platform="k8s",
        module="aistack.k8s.training_queue",
        cls="TrainingQueue",
        args="TrainingQueueArgs",
        docs_page="components/k8s/training-queue.md",
    ),
    ComponentSpec(
        token="aistack:index:K8sInferenceService",
        platform="k8s",
        module="aistack.k8s.inference_service.component",
        cls="InferenceService",
        args="InferenceServiceArgs",
        docs_page="components/k8s/inference-service.md",
        args_module="aistack.k8s._inference_args",
    ),
    ComponentSpec(
        token="aistack:index:K8sImagePolicy",
        platform="k8s",
        module="aistack.k8s.image_policy",
        cls="ImagePolicy",
        args="ImagePolicyArgs",
        docs_page="components/k8s/image-policy.md",
    ),
)


def by_platform(platform: Platform) -> tuple[ComponentSpec, ...]:
    """The platform's components, in registry order."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}: one of {PLATFORMS}")
    return tuple(spec for spec in COMPONENTS if spec.platform == platform)


def by_token(token: str) -> ComponentSpec:
    """The component registering `token` (`aistack:index:GcpNetwork`) or named it
    (`GcpNetwork`)."""
    wanted = token if token.startswith(TOKEN_PREFIX) else TOKEN_PREFIX + token
    for spec in COMPONENTS:
        if spec.token == wanted:
            return spec
    raise KeyError(token)


def exports(platform: Platform) -> dict[str, str]:
    """The platform package's lazy exports of its components: each class and Args name
    mapped to the module defining it (the package adds its other public names)."""
    names: dict[str, str] = {}
    for spec in by_platform(platform):
        names[spec.cls] = spec.module
        names[spec.args] = spec.args_module
    return names
