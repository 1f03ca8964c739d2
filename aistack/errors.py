"""The one error family aistack raises, and how configuration problems are collected.

A `ConfigError` carries every problem found in one pass, each with the field path that
caused it and the fix, so a user corrects their stack in one edit rather than one
`pulumi up` per mistake. Components raise it before registering any resource.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["AistackError", "ConfigError", "EngineError", "Problem", "Problems"]


class AistackError(Exception):
    """Base class of every error aistack raises on purpose."""


class EngineError(AistackError):
    """What the Pulumi engine itself would refuse (a duplicate URN, say), raised offline so
    a stack that cannot deploy does not pass its tests."""


@dataclass(frozen=True)
class Problem:
    """One invalid setting: where it is, what is wrong, and how to fix it."""

    field: str
    message: str
    fix: str = ""

    def render(self) -> str:
        text = f"{self.field}: {self.message}"
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class ConfigError(AistackError, ValueError):
    """Invalid configuration; `problems` lists every one found, by field path."""

    def __init__(
        self,
        problems: Iterable[Problem] | str,
        *,
        field: str = "",
        fix: str = "",
    ) -> None:
        if isinstance(problems, str):
            problems = [Problem(field=field or "config", message=problems, fix=fix)]
        self.problems: tuple[Problem, ...] = tuple(problems)
        if not self.problems:
            raise ValueError("ConfigError needs at least one problem")
        super().__init__(self._render())

    @property
    def fields(self) -> list[str]:
        return [problem.field for problem in self.problems]

    def _render(self) -> str:
        if len(self.problems) == 1:
            return "Invalid configuration: " + self.problems[0].render()
        lines = [f"Invalid configuration ({len(self.problems)} problems):"]
        lines += [f"  - {problem.render()}" for problem in self.problems]
        return "\n".join(lines)

    def prefixed(self, prefix: str) -> ConfigError:
        """The same problems with `prefix.` in front of every field path."""
        return ConfigError(
            Problem(f"{prefix}.{p.field}" if prefix else p.field, p.message, p.fix)
            for p in self.problems
        )


@dataclass
class Problems:
    """Collects problems during validation and raises them together."""

    items: list[Problem] = field(default_factory=list)

    def add(self, field: str, message: str, fix: str = "") -> None:
        self.items.append(Problem(field, message, fix))

    def extend(self, error: ConfigError) -> None:
        self.items.extend(error.problems)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise ConfigError(self.items)
