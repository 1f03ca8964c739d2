"""Helpers for rule tests: run a program and evaluate one rule on its graph."""

from __future__ import annotations

import pytest

from tests.policy.rules.shared_verdicts import build, verdicts_of


@pytest.fixture
def verdicts():
    """`verdicts(rule_id, program)` -> {resource name: status} for that rule."""

    def _verdicts(rule_id: str, program, **config) -> dict[str, str]:
        return verdicts_of(rule_id, build(program, **config))

    return _verdicts
