"""Helpers for rule tests: run a program and evaluate one rule on its graph."""

from __future__ import annotations

import pytest

from aistack import engine, policy


@pytest.fixture
def verdicts():
    """`verdicts(rule_id, program)` -> {resource name: status} for that rule."""

    def _verdicts(rule_id: str, program, **config) -> dict[str, str]:
        graph = engine.run(program, config={"aws:region": "us-east-1", **config})
        rule = next(r for r in policy.all_rules() if r.id == rule_id)
        return {f.resource_name: f.status for f in rule.evaluate(graph)}

    return _verdicts
