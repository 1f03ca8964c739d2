"""Unit-test your own Pulumi program on aistack's simulated cloud (a pytest plugin).

Installed with aistack and loaded by pytest automatically. In a team's test:

    def test_training_pool_scales_to_zero(aistack_stack):
        graph = aistack_stack.project("infra", stack="dev")      # a Pulumi project dir
        graph = aistack_stack.run(my_program, config={...})      # or a function
        assert graph.of_type("aws:batch/computeEnvironment:ComputeEnvironment")

`aistack_stack.check(graph)` evaluates the checklist rules and fails the test on any
mandatory violation, listing each with its fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from aistack.engine.graph import StackGraph

__all__ = ["StackRunner", "aistack_stack", "assert_compliant"]


def assert_compliant(graph: StackGraph, *checklist_ids: str) -> None:
    """Fail with every mandatory violation (optionally only for these checklist IDs)."""
    from aistack import policy

    report = policy.evaluate(graph)
    wanted = set(checklist_ids)
    rules = {r.id: r for r in report.rules}
    failures = [
        f
        for f in report.mandatory_violations
        if not wanted or wanted & set(rules[f.rule_id].checklist)
    ]
    if failures:
        lines = [f"{f.rule_id} {f.resource_name}: {f.message} Fix: {f.fix}" for f in failures]
        raise AssertionError("checklist violations:\n" + "\n".join(lines))


class StackRunner:
    """Runs programs or projects on the simulated cloud; one fresh run per call."""

    def run(
        self,
        program: Callable[[], Any],
        *,
        config: Mapping[str, Any] | None = None,
        project: str = "aistack",
        stack: str = "dev",
    ) -> StackGraph:
        from aistack import engine

        return engine.run(program, config=config, project=project, stack=stack)

    def project(self, path: str | Path, stack: str = "dev") -> StackGraph:
        from aistack import engine

        return engine.run_project(path, stack=stack)

    check = staticmethod(assert_compliant)


@pytest.fixture
def aistack_stack() -> StackRunner:
    """Run a Pulumi program or project on aistack's simulated cloud."""
    return StackRunner()
