"""The simulated Google Cloud project as one `SimulatedProvider` (aistack.engine.context):
the registrations go to `resources.resource`, the invokes to the table `invokes.invokes`
builds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.runtime import MockResourceArgs

from aistack.engine.context import Invoke, SimContext
from aistack.engine.gcp_cloud.invokes import invokes
from aistack.engine.gcp_cloud.resources import resource

__all__ = ["GcpCloud"]


class GcpCloud:
    """Answers `gcp:` registrations and invokes for one run."""

    package = "gcp"

    def __init__(self, ctx: SimContext) -> None:
        self.ctx = ctx
        self._invokes = invokes(ctx)

    def resource(
        self, args: MockResourceArgs, inputs: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        return resource(self.ctx, args, inputs)

    def invokes(self) -> Mapping[str, Invoke]:
        return self._invokes
