"""The simulated cloud: what a provider would return for each resource and invoke.

`SimulatedCloud` is the Pulumi mocks the engine runs programs against. It answers
provider registrations itself and hands every other registration and every invoke to the
simulation of the token's package: `aws_cloud`, `gcp_cloud`, `k8s_cloud`, each a
`SimulatedProvider` (aistack.engine.context). Ids, ARNs, self-links and zones look like
the real ones and are derived from the resource's URN, so two runs of the same program
produce the same graph. An invoke the simulated cloud does not know fails loudly with its
token: a silent empty answer would let a component build against data that does not exist.
"""

from __future__ import annotations

from typing import Any

from pulumi.runtime import MockCallArgs, MockResourceArgs, Mocks

from aistack.engine import aws_cloud
from aistack.engine.context import (
    ACCOUNT_ID,
    GCP_PROJECT,
    Existing,
    Invoke,
    NotFound,
    SimContext,
    SimulatedProvider,
    digest,
)
from aistack.engine.gcp_cloud import GcpCloud
from aistack.engine.k8s_cloud import K8sCloud
from aistack.errors import AistackError

__all__ = ["SimulatedCloud", "UnknownInvokeError", "ACCOUNT_ID", "GCP_PROJECT"]


class UnknownInvokeError(AistackError):
    """A program called a provider function the simulated cloud cannot answer."""


class SimulatedCloud(SimContext, Mocks):
    """Answers resource registrations and invokes for AWS, GCP and Kubernetes."""

    # Looked up on each cloud as it is built, so a test can answer as an AWS account other
    # than the simulated one by replacing one of these on the class (tests/aws: an account
    # that lacks a zone, the China partition).
    _aws_partition = aws_cloud.partition
    _aws_zones = aws_cloud.availability_zones
    _aws_offerings = aws_cloud.instance_type_offerings

    def __init__(
        self, config: dict[str, str] | None = None, existing: Existing | None = None
    ) -> None:
        super().__init__(config, existing)
        aws = aws_cloud.AwsCloud(
            self,
            answers={
                aws_cloud.PARTITION: self._aws_partition,
                aws_cloud.AVAILABILITY_ZONES: self._aws_zones,
                aws_cloud.INSTANCE_TYPE_OFFERINGS: self._aws_offerings,
            },
        )
        simulations: tuple[SimulatedProvider, ...] = (aws, GcpCloud(self), K8sCloud(self))
        self._simulations = {simulation.package: simulation for simulation in simulations}
        self._invokes: dict[str, Invoke] = {}
        for simulation in simulations:
            self._invokes.update(simulation.invokes())

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        if args.typ.startswith("pulumi:providers:"):
            return digest("provider", args.name, length=12), inputs
        simulation = self._simulations.get(args.typ.split(":", 1)[0])
        if simulation is None:
            return f"{args.name}-{digest(args.typ, args.name, length=8)}", inputs
        return simulation.resource(args, inputs)

    def call(self, args: MockCallArgs) -> dict[str, Any]:  # type: ignore[override]
        answer = self._invokes.get(args.token)
        if answer is None:
            raise UnknownInvokeError(
                f"the simulated cloud cannot answer invoke {args.token!r}; "
                "add it to the simulation of its package (aistack.engine.aws_cloud, "
                "gcp_cloud, k8s_cloud; known: " + ", ".join(sorted(self._invokes)) + ")"
            )
        try:
            return answer(dict(args.args), args.provider)
        except NotFound as missing:
            # The mocks monitor turns (outputs, failures) into the invoke's failure, which
            # the SDK raises where the program can catch it; an exception raised here would
            # be an unhandled RPC error that fails the run whatever the program does.
            return {}, [("", str(missing))]  # type: ignore[return-value]
