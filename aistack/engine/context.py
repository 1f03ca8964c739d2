"""What a simulated provider may ask of the run it answers, and what a provider is.

The AWS, GCP and Kubernetes simulations (`aws_cloud`, `gcp_cloud`, `k8s_cloud`) are
handed a `SimContext`: the run's config, the inputs of the providers the program
registered, the simulated account's quotas, the rules that pick a resource's region and
project, and a place to remember what earlier registrations of the run filed. Each
simulation is a `SimulatedProvider`, and `SimulatedCloud` (aistack.engine.cloud) only
routes registrations and invokes to them by package. This module imports no simulation
and not `cloud`: the simulations depend on it, never on the dispatcher that holds them,
so the engine's modules import in one direction only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from pulumi.runtime import MockResourceArgs

from aistack.errors import AistackError

__all__ = [
    "ACCOUNT_ID",
    "DEFAULT_AWS_REGION",
    "DEFAULT_GCP_REGION",
    "GCP_PROJECT",
    "Existing",
    "Invoke",
    "NotFound",
    "SimContext",
    "SimulatedProvider",
    "digest",
]

ACCOUNT_ID = "123456789012"
GCP_PROJECT = "aistack-sim"
DEFAULT_AWS_REGION = "us-east-1"
DEFAULT_GCP_REGION = "us-central1"

#: One invoke's answer: (the invoke's arguments, the provider reference) -> its outputs.
Invoke = Callable[[dict[str, Any], str], dict[str, Any]]
#: What the account or project already holds when the run starts, left by earlier
#: deployments (engine.lifecycle.Account.existing): (resource type, scope, name) -> the
#: outputs the cloud would return for it. The scope is the lifecycle's (project and
#: location on GCP, account and region on AWS). Lookups (an ECR repository by name, a
#: workload identity pool by id) answer from it; a fresh account holds nothing.
Existing = Mapping[tuple[str, tuple[str, ...], str], Mapping[str, Any]]


class NotFound(AistackError):
    """A lookup of a name the account does not hold. The run answers it as the invoke's
    failure, which the program can catch, as it can the provider's own "not found"."""


def digest(*parts: str, length: int = 17) -> str:
    """A stable hex digest of `parts`: every made-up id derives from the resource's own
    names, so two runs of the same program record the same graph."""
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:length]


class SimContext:
    """The run as a simulated provider sees it. One per run: nothing is shared between runs
    except the class-level quota tables, which tests replace to simulate another account."""

    #: The simulated AWS account is new: GPU vCPU quotas start at zero, as they often do.
    service_quotas: ClassVar[dict[str, float]] = {}
    #: The simulated GCP project is new: GPU quotas and GPUS-ALL-REGIONS start at zero.
    #: Keys: `<quota id>` (its default), `<quota id>/<region>`, `<quota id>/<region>/<gpu
    #: family>` (engine.gcp_cloud.quotas answers getSQuotaInfo and QuotaPreference from these).
    gcp_quotas: ClassVar[dict[str, float]] = {}

    def __init__(
        self, config: Mapping[str, str] | None = None, existing: Existing | None = None
    ) -> None:
        #: The run's flat config (`aws:region`, `gcp:project`, `kubernetes:kubeconfig`...).
        self.config: dict[str, str] = dict(config or {})
        self.existing: Existing = dict(existing or {})
        #: provider reference ("urn::id") -> that provider's inputs, filled by the recorder.
        self.providers: dict[str, dict[str, Any]] = {}
        #: What a simulation remembers between registrations of this run (the address ranges
        #: a VPC holds, the quota preferences filed), by a key the simulation owns.
        self.memory: dict[str, Any] = {}

    def provider_inputs(self, provider: str | None) -> dict[str, Any]:
        """The inputs of the provider a resource or invoke names (empty for the default)."""
        return self.providers.get(provider or "", {})

    def aws_region(self, args: dict[str, Any], provider: str | None) -> str:
        if args.get("region"):
            return str(args["region"])
        return str(
            self.provider_inputs(provider).get("region")
            or self.config.get("aws:region")
            or DEFAULT_AWS_REGION
        )

    def gcp_region(self, args: dict[str, Any], provider: str | None) -> str:
        return str(
            args.get("region")
            or self.provider_inputs(provider).get("region")
            or self.config.get("gcp:region")
            or DEFAULT_GCP_REGION
        )

    def gcp_project(self, args: dict[str, Any], provider: str | None) -> str:
        return str(
            args.get("project")
            or self.provider_inputs(provider).get("project")
            or self.config.get("gcp:project")
            or GCP_PROJECT
        )


class SimulatedProvider(Protocol):
    """One cloud's simulation: what its provider returns for the resource types and invokes
    of its package."""

    #: The package of the types and tokens it answers: `aws`, `gcp`, `kubernetes`.
    package: str

    def resource(
        self, args: MockResourceArgs, inputs: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """The id and outputs for one registration; `inputs` is a copy it may change."""
        ...

    def invokes(self) -> Mapping[str, Invoke]:
        """The invokes it answers, by token."""
        ...
