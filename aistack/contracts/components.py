"""What one component reads from another it is wired to, as Protocols: the contract a
component, or a stand-in built from exported ids (the component package's wiring for
TypeScript, Go and YAML programs, `components/aistack_components/wiring.py`), fulfils.

Components type their wiring keywords with these, never `Any`: `X | None = None`, and a
missing one is a ConfigError naming the keyword (`AistackModel.validate_with`). Only what
the readers use is here; each cloud's shapes extend the neutral ones in
`aistack.contracts.aws`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["TieredNetwork"]


@runtime_checkable
class TieredNetwork(Protocol):
    """A network split into tiers (training, inference, ...), each in planned zones."""

    def zones(self, tier: str) -> list[str]:
        """The zones `tier`'s subnets are in; [] when not known (ids from another stack),
        which skips the checks that compare them with a machine type's offers."""
        ...
