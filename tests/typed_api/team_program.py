"""A team's program as a type checker reads it: every public class of `aistack.aws`,
`aistack.gcp` and `aistack.k8s` is its real type, never Any from the lazy exports.

Not run: `make test` and `make typecheck` give it to mypy with the strict flags
(pyproject.toml, the [tool.mypy] override for tests.typed_api). Each `assert_type` holds the
package's name to the class its module defines and fails on Any, so a name whose type a
checker cannot see fails the lint. tests/test_typed_api.py keeps
the names here equal to the packages' exports.
"""

from __future__ import annotations

from typing import assert_type

import pulumi

from aistack import aws, gcp, k8s
from aistack.aws.audit_trail import AuditTrail as AwsAuditTrail
from aistack.aws.audit_trail import AuditTrailArgs as AwsAuditTrailArgs
from aistack.aws.budget_guard import BudgetGuard as AwsBudgetGuard
from aistack.aws.budget_guard import BudgetGuardArgs as AwsBudgetGuardArgs
from aistack.aws.container_registry import ContainerRegistry as AwsContainerRegistry
from aistack.aws.container_registry import ContainerRegistryArgs as AwsContainerRegistryArgs
from aistack.aws.dataset_bucket import DatasetBucket as AwsDatasetBucket
from aistack.aws.dataset_bucket import DatasetBucketArgs as AwsDatasetBucketArgs
from aistack.aws.gpu_quota import GpuQuota as AwsGpuQuota
from aistack.aws.gpu_quota import GpuQuotaArgs as AwsGpuQuotaArgs
from aistack.aws.inference import InferenceTier as AwsInferenceTier
from aistack.aws.inference import InferenceTierArgs as AwsInferenceTierArgs
from aistack.aws.karpenter_gpu_pool import KarpenterGpuPool as AwsKarpenterGpuPool
from aistack.aws.karpenter_gpu_pool import KarpenterGpuPoolArgs as AwsKarpenterGpuPoolArgs
from aistack.aws.network import Network as AwsNetwork
from aistack.aws.network import NetworkArgs as AwsNetworkArgs
from aistack.aws.notebook import Notebook as AwsNotebook
from aistack.aws.notebook import NotebookArgs as AwsNotebookArgs
from aistack.aws.training_pool import TrainingPool as AwsTrainingPool
from aistack.aws.training_pool import TrainingPoolArgs as AwsTrainingPoolArgs
from aistack.aws.workload_identity import WorkloadIdentity as AwsWorkloadIdentity
from aistack.aws.workload_identity import WorkloadIdentityArgs as AwsWorkloadIdentityArgs
from aistack.contracts.capacity import CapacityNeed, HasCapacityNeeds
from aistack.dataset_metadata import DatasetMetadata as AwsDatasetMetadata
from aistack.gcp._inference_args import InferenceTierArgs as GcpInferenceTierArgs
from aistack.gcp.audit_logs import AuditLogs as GcpAuditLogs
from aistack.gcp.audit_logs import AuditLogsArgs as GcpAuditLogsArgs
from aistack.gcp.budget_guard import BudgetGuard as GcpBudgetGuard
from aistack.gcp.budget_guard import BudgetGuardArgs as GcpBudgetGuardArgs
from aistack.gcp.container_registry import ContainerRegistry as GcpContainerRegistry
from aistack.gcp.container_registry import ContainerRegistryArgs as GcpContainerRegistryArgs
from aistack.gcp.dataset_bucket import DatasetBucket as GcpDatasetBucket
from aistack.gcp.dataset_bucket import DatasetBucketArgs as GcpDatasetBucketArgs
from aistack.gcp.gke_cluster import GkeCluster as GcpGkeCluster
from aistack.gcp.gke_cluster import GkeClusterArgs as GcpGkeClusterArgs
from aistack.gcp.gpu_node_pool import GpuNodePool as GcpGpuNodePool
from aistack.gcp.gpu_node_pool import GpuNodePoolArgs as GcpGpuNodePoolArgs
from aistack.gcp.gpu_quota import GpuQuota as GcpGpuQuota
from aistack.gcp.gpu_quota import GpuQuotaArgs as GcpGpuQuotaArgs
from aistack.gcp.gpu_quota import HasGpuNeeds as GcpHasGpuNeeds
from aistack.gcp.inference_tier import InferenceTier as GcpInferenceTier
from aistack.gcp.network import Network as GcpNetwork
from aistack.gcp.network import NetworkArgs as GcpNetworkArgs
from aistack.gcp.notebook import Notebook as GcpNotebook
from aistack.gcp.notebook import NotebookArgs as GcpNotebookArgs
from aistack.gcp.project_services import ProjectServices as GcpProjectServices
from aistack.gcp.project_services import ProjectServicesArgs as GcpProjectServicesArgs
from aistack.gcp.training_pool import TrainingPool as GcpTrainingPool
from aistack.gcp.training_pool import TrainingPoolArgs as GcpTrainingPoolArgs
from aistack.gcp.workload_identity import WorkloadIdentity as GcpWorkloadIdentity
from aistack.gcp.workload_identity import WorkloadIdentityArgs as GcpWorkloadIdentityArgs
from aistack.k8s._inference_args import InferenceServiceArgs as K8sInferenceServiceArgs
from aistack.k8s.gpu_monitoring import GpuMonitoring as K8sGpuMonitoring
from aistack.k8s.gpu_monitoring import GpuMonitoringArgs as K8sGpuMonitoringArgs
from aistack.k8s.image_policy import ImagePolicy as K8sImagePolicy
from aistack.k8s.image_policy import ImagePolicyArgs as K8sImagePolicyArgs
from aistack.k8s.inference_service import InferenceService as K8sInferenceService
from aistack.k8s.team_namespace import EgressAllow as K8sEgressAllow
from aistack.k8s.team_namespace import TeamNamespace as K8sTeamNamespace
from aistack.k8s.team_namespace import TeamNamespaceArgs as K8sTeamNamespaceArgs
from aistack.k8s.team_namespace import WorkloadAccount as K8sWorkloadAccount
from aistack.k8s.training_job_template import TrainingJobTemplate as K8sTrainingJobTemplate
from aistack.k8s.training_job_template import TrainingJobTemplateArgs as K8sTrainingJobTemplateArgs
from aistack.k8s.training_queue import QueueFlavor as K8sQueueFlavor
from aistack.k8s.training_queue import TrainingQueue as K8sTrainingQueue
from aistack.k8s.training_queue import TrainingQueueArgs as K8sTrainingQueueArgs


def aws_classes() -> None:
    assert_type(aws.CapacityNeed, type[CapacityNeed])
    assert_type(aws.HasCapacityNeeds, type[HasCapacityNeeds])
    assert_type(aws.HasQuotaNeeds, type[HasCapacityNeeds])
    assert_type(aws.AuditTrail, type[AwsAuditTrail])
    assert_type(aws.AuditTrailArgs, type[AwsAuditTrailArgs])
    assert_type(aws.BudgetGuard, type[AwsBudgetGuard])
    assert_type(aws.BudgetGuardArgs, type[AwsBudgetGuardArgs])
    assert_type(aws.ContainerRegistry, type[AwsContainerRegistry])
    assert_type(aws.ContainerRegistryArgs, type[AwsContainerRegistryArgs])
    assert_type(aws.DatasetBucket, type[AwsDatasetBucket])
    assert_type(aws.DatasetBucketArgs, type[AwsDatasetBucketArgs])
    assert_type(aws.DatasetMetadata, type[AwsDatasetMetadata])
    assert_type(aws.GpuQuota, type[AwsGpuQuota])
    assert_type(aws.GpuQuotaArgs, type[AwsGpuQuotaArgs])
    assert_type(aws.InferenceTier, type[AwsInferenceTier])
    assert_type(aws.InferenceTierArgs, type[AwsInferenceTierArgs])
    assert_type(aws.KarpenterGpuPool, type[AwsKarpenterGpuPool])
    assert_type(aws.KarpenterGpuPoolArgs, type[AwsKarpenterGpuPoolArgs])
    assert_type(aws.Network, type[AwsNetwork])
    assert_type(aws.NetworkArgs, type[AwsNetworkArgs])
    assert_type(aws.Notebook, type[AwsNotebook])
    assert_type(aws.NotebookArgs, type[AwsNotebookArgs])
    assert_type(aws.TrainingPool, type[AwsTrainingPool])
    assert_type(aws.TrainingPoolArgs, type[AwsTrainingPoolArgs])
    assert_type(aws.WorkloadIdentity, type[AwsWorkloadIdentity])
    assert_type(aws.WorkloadIdentityArgs, type[AwsWorkloadIdentityArgs])


def gcp_classes() -> None:
    assert_type(gcp.CapacityNeed, type[CapacityNeed])
    assert_type(gcp.HasCapacityNeeds, type[HasCapacityNeeds])
    assert_type(gcp.AuditLogs, type[GcpAuditLogs])
    assert_type(gcp.AuditLogsArgs, type[GcpAuditLogsArgs])
    assert_type(gcp.BudgetGuard, type[GcpBudgetGuard])
    assert_type(gcp.BudgetGuardArgs, type[GcpBudgetGuardArgs])
    assert_type(gcp.ContainerRegistry, type[GcpContainerRegistry])
    assert_type(gcp.ContainerRegistryArgs, type[GcpContainerRegistryArgs])
    assert_type(gcp.DatasetBucket, type[GcpDatasetBucket])
    assert_type(gcp.DatasetBucketArgs, type[GcpDatasetBucketArgs])
    assert_type(gcp.GkeCluster, type[GcpGkeCluster])
    assert_type(gcp.GkeClusterArgs, type[GcpGkeClusterArgs])
    assert_type(gcp.GpuNodePool, type[GcpGpuNodePool])
    assert_type(gcp.GpuNodePoolArgs, type[GcpGpuNodePoolArgs])
    assert_type(gcp.GpuQuota, type[GcpGpuQuota])
    assert_type(gcp.GpuQuotaArgs, type[GcpGpuQuotaArgs])
    assert_type(gcp.HasGpuNeeds, type[GcpHasGpuNeeds])
    assert_type(gcp.InferenceTier, type[GcpInferenceTier])
    assert_type(gcp.InferenceTierArgs, type[GcpInferenceTierArgs])
    assert_type(gcp.Network, type[GcpNetwork])
    assert_type(gcp.NetworkArgs, type[GcpNetworkArgs])
    assert_type(gcp.Notebook, type[GcpNotebook])
    assert_type(gcp.NotebookArgs, type[GcpNotebookArgs])
    assert_type(gcp.ProjectServices, type[GcpProjectServices])
    assert_type(gcp.ProjectServicesArgs, type[GcpProjectServicesArgs])
    assert_type(gcp.TrainingPool, type[GcpTrainingPool])
    assert_type(gcp.TrainingPoolArgs, type[GcpTrainingPoolArgs])
    assert_type(gcp.WorkloadIdentity, type[GcpWorkloadIdentity])
    assert_type(gcp.WorkloadIdentityArgs, type[GcpWorkloadIdentityArgs])


def k8s_classes() -> None:
    assert_type(k8s.EgressAllow, type[K8sEgressAllow])
    assert_type(k8s.GpuMonitoring, type[K8sGpuMonitoring])
    assert_type(k8s.GpuMonitoringArgs, type[K8sGpuMonitoringArgs])
    assert_type(k8s.ImagePolicy, type[K8sImagePolicy])
    assert_type(k8s.ImagePolicyArgs, type[K8sImagePolicyArgs])
    assert_type(k8s.InferenceService, type[K8sInferenceService])
    assert_type(k8s.InferenceServiceArgs, type[K8sInferenceServiceArgs])
    assert_type(k8s.QueueFlavor, type[K8sQueueFlavor])
    assert_type(k8s.TeamNamespace, type[K8sTeamNamespace])
    assert_type(k8s.TeamNamespaceArgs, type[K8sTeamNamespaceArgs])
    assert_type(k8s.TrainingJobTemplate, type[K8sTrainingJobTemplate])
    assert_type(k8s.TrainingJobTemplateArgs, type[K8sTrainingJobTemplateArgs])
    assert_type(k8s.TrainingQueue, type[K8sTrainingQueue])
    assert_type(k8s.TrainingQueueArgs, type[K8sTrainingQueueArgs])
    assert_type(k8s.WorkloadAccount, type[K8sWorkloadAccount])


def the_other_names() -> tuple[object, ...]:
    return (aws.image_by_digest, aws.QuotaNeed, gcp.GpuNeed)


def a_dataset_bucket() -> aws.DatasetBucket:
    # What a team writes: the component, its Args as a model, and its typed outputs.
    bucket = aws.DatasetBucket(
        "data",
        aws.DatasetBucketArgs.model_validate({"governance": {"owner": "ml@example.com"}}),
    )
    name: pulumi.Output[str] = bucket.bucket.bucket
    pulumi.export("bucket", name)
    return bucket


def a_pinned_image(reference: str) -> str:
    return aws.image_by_digest(reference, "sha256:" + "0" * 64)


def a_training_pool(
    network: aws.Network,
    identity: aws.WorkloadIdentity,
    data: aws.DatasetBucket,
    checkpoints: aws.DatasetBucket,
) -> aws.TrainingPool:
    # The components fulfil the wiring contracts (aistack.contracts.aws) the pool reads.
    return aws.TrainingPool(
        "train",
        {"region": "us-east-1"},
        network=network,
        identity=identity,
        dataset=data,
        checkpoints=checkpoints,
    )


def an_inference_tier(
    network: aws.Network, identity: aws.WorkloadIdentity, models: aws.DatasetBucket
) -> aws.InferenceTier:
    return aws.InferenceTier(
        "serve", {"region": "us-east-1"}, network=network, identity=identity, models=models
    )
