"""`gcp.ProjectServices`: the Google APIs a stack's components need, enabled first.

A fresh project has most APIs off, and a resource whose API is off fails its create
(*"... API has not been used in project ... before or it is disabled"*). Enabling is
asynchronous too: `pulumi up` races ahead unless every resource depends on the Service that
enables its API (pulumi/pulumi#12163, pulumi-gcp#992, terraform-provider-google#11020). Every
aistack GCP component takes this component as its `services=` keyword and depends on it.

APIs are never switched off on `destroy`: disabling one disables what depends on it
(terraform-provider-google#3198: a dependent disable switched `compute` off), and other
stacks in the project may use them.
"""

from __future__ import annotations

import re

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator

from aistack.config import AistackModel
from aistack.errors import ConfigError, Problem
from aistack.gcp._base import child_opts

__all__ = ["ProjectServices", "ProjectServicesArgs", "BASE_SERVICES", "COMPONENT_SERVICES"]

#: What enabling APIs itself needs, and what every component uses: IAM (grants, service
#: accounts) and Resource Manager (project IAM). serviceusage must already be on for any
#: `projects.Service` to work (it is on in new projects); declaring it keeps it on.
BASE_SERVICES = (
    "serviceusage.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "iam.googleapis.com",
)

#: The APIs each aistack GCP component calls (docs/components/gcp/project-services.md).
COMPONENT_SERVICES: dict[str, tuple[str, ...]] = {
    "DatasetBucket": ("storage.googleapis.com", "cloudkms.googleapis.com"),
    "GpuQuota": ("cloudquotas.googleapis.com", "compute.googleapis.com"),
    # Service Account Credentials (impersonation) and Security Token Service (federated
    # token exchange) serve every GKE and GitHub Actions sign-in (IAM docs, "Configure
    # Workload Identity Federation with deployment pipelines": enable IAM, Resource
    # Manager, Service Account Credentials and Security Token Service APIs).
    "WorkloadIdentity": (
        "iam.googleapis.com",
        "iamcredentials.googleapis.com",
        "sts.googleapis.com",
    ),
    # containerscanning: with it on, a repository's INHERITED scanning setting scans every
    # pushed image (Artifact Analysis docs, "Enable automatic scanning").
    "ContainerRegistry": (
        "artifactregistry.googleapis.com",
        "cloudkms.googleapis.com",
        "containerscanning.googleapis.com",
    ),
    # The budget, its topic (CMEK: Cloud KMS) and channels; the daily-alert function (gen2
    # builds with Cloud Build into Artifact Registry, runs on Cloud Run behind Eventarc,
    # logs for alerts).
    "BudgetGuard": (
        "billingbudgets.googleapis.com",
        "pubsub.googleapis.com",
        "monitoring.googleapis.com",
        "cloudkms.googleapis.com",
        "cloudfunctions.googleapis.com",
        "run.googleapis.com",
        "eventarc.googleapis.com",
        "cloudbuild.googleapis.com",
        "artifactregistry.googleapis.com",
        "storage.googleapis.com",
        "logging.googleapis.com",
    ),
    # The VPC, subnets, firewall, routes and NAT (Compute), and the private zones that
    # answer Google API names with the Private Google Access addresses (Cloud DNS).
    "Network": ("compute.googleapis.com", "dns.googleapis.com"),
    # The cluster (Kubernetes Engine), its nodes' VMs (Compute), the node service account
    # (IAM), Binary Authorization evaluation, and where nodes ship logs and metrics (GKE
    # docs, "Before you begin": enable the Google Kubernetes Engine API).
    "GkeCluster": (
        "container.googleapis.com",
        "compute.googleapis.com",
        "iam.googleapis.com",
        "binaryauthorization.googleapis.com",
        "logging.googleapis.com",
        "monitoring.googleapis.com",
    ),
    "GpuNodePool": ("container.googleapis.com", "compute.googleapis.com"),
    # Workbench instances are the Notebooks API v2 (notebooks.googleapis.com, Vertex AI
    # Workbench REST reference); the VM and its disks are Compute Engine's, CMEK is Cloud
    # KMS, and the notebook's logs go to Cloud Logging. Not aiplatform: that is Colab
    # Enterprise and Vertex AI training, which a Workbench instance does not call.
    "Notebook": (
        "notebooks.googleapis.com",
        "compute.googleapis.com",
        "cloudkms.googleapis.com",
        "logging.googleapis.com",
    ),
    # The VMs, template, group and health check (Compute), the dataset and checkpoints
    # (Storage), the regional log bucket and sink (Logging), the alert policies and the Ops
    # Agent's metrics (Monitoring).
    "TrainingPool": (
        "compute.googleapis.com",
        "storage.googleapis.com",
        "logging.googleapis.com",
        "monitoring.googleapis.com",
    ),
    # The VMs, templates, groups, autoscalers, load balancer and Cloud Armor (Compute),
    # the models bucket (Storage), the regional log bucket and sink (Logging), the alert
    # policies and dashboard (Monitoring).
    "InferenceTier": (
        "compute.googleapis.com",
        "storage.googleapis.com",
        "logging.googleapis.com",
        "monitoring.googleapis.com",
    ),
    # The audit configs are the project's IAM policy (Resource Manager); the regional log
    # bucket and sink are Logging's.
    "AuditLogs": ("logging.googleapis.com", "cloudresourcemanager.googleapis.com"),
}

_SERVICE_NAME = re.compile(r"[a-z][a-z0-9-]*\.googleapis\.com")
_PROJECT_ID = re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]")


class ProjectServicesArgs(AistackModel):
    project: str = Field(
        description="Project ID the APIs are enabled on (6-30 characters, e.g. "
        "'team-ml-prod'). Explicit: never the provider's default project."
    )
    services: tuple[str, ...] = Field(
        default_factory=lambda: tuple(
            sorted({*BASE_SERVICES, *(s for apis in COMPONENT_SERVICES.values() for s in apis)})
        ),
        description="APIs to enable; default: every API aistack's GCP components use. "
        "Extra APIs are added with `extra_services`.",
    )
    extra_services: tuple[str, ...] = Field(
        (), description="More APIs the team's own resources need, e.g. 'bigquery.googleapis.com'."
    )

    @field_validator("project")
    @classmethod
    def _project_id(cls, project: str) -> str:
        if not _PROJECT_ID.fullmatch(project):
            raise ValueError(
                f"{project!r} is not a project ID. Fix: use the project's ID (6-30 "
                "lowercase letters, digits and hyphens, starting with a letter), not its "
                "display name or number."
            )
        return project

    @field_validator("services", "extra_services")
    @classmethod
    def _service_names(cls, services: tuple[str, ...]) -> tuple[str, ...]:
        for service in services:
            if not _SERVICE_NAME.fullmatch(service):
                raise ValueError(
                    f"{service!r} is not an API service name. Fix: use the Service Usage "
                    "name, e.g. 'storage.googleapis.com'."
                )
        return services

    def all_services(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.services, *self.extra_services)))


class ProjectServices(pulumi.ComponentResource):
    """One `projects.Service` per API, kept enabled on destroy."""

    args: ProjectServicesArgs
    project: str
    services: dict[str, gcp.projects.Service]
    enabled_services: pulumi.Output[list[str]]

    def __init__(
        self,
        name: str,
        args: ProjectServicesArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        args = ProjectServicesArgs.validate_with(args, lambda _: None, where=name)[0]
        super().__init__("aistack:index:GcpProjectServices", name, {"project": args.project}, opts)
        self.args = args
        self.project = args.project
        self._name = name
        self.services = {
            service: gcp.projects.Service(
                f"{name}-{service.split('.', 1)[0]}",
                project=args.project,
                service=service,
                # Never switch an API off: other stacks and the project's own default
                # resources may use it, and a dependent disable cascades.
                disable_on_destroy=False,
                disable_dependent_services=False,
                opts=child_opts(self),
            )
            for service in args.all_services()
        }
        # The enabled APIs as one Output that depends on every Service: what a program in
        # another language passes on (components/), since a component object cannot cross
        # languages but an Output carries the resources it depends on.
        self.enabled_services = pulumi.Output.all(
            *(service.service for service in self.services.values())
        ).apply(list)
        self.register_outputs({"project": args.project, "services": list(self.services)})

    def missing(self, *apis: str, where: str) -> list[Problem]:
        """Problems for the `apis` this component does not enable."""
        return [
            Problem(
                f"{where}.services",
                f"the ProjectServices {self._name!r} does not enable {api}, which this "
                "component uses: its first `pulumi up` on a fresh project would fail.",
                f"add {api!r} to {self._name}'s extraServices.",
            )
            for api in apis
            if api not in self.services
        ]

    def require(self, *apis: str, where: str) -> None:
        problems = self.missing(*apis, where=where)
        if problems:
            raise ConfigError(problems)

    def enabling(self, *apis: str) -> list[pulumi.Resource]:
        """The Service resources enabling `apis`: what a resource using them depends on."""
        return [self.services[api] for api in apis if api in self.services]
