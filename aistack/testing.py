"""Unit-test your own Pulumi program on aistack's simulated cloud (a pytest plugin).

Installed with aistack and loaded by pytest automatically. In a team's test:

    def test_training_pool_scales_to_zero(aistack_stack):
        graph = aistack_stack.project("infra", stack="dev")      # a Pulumi project dir
        graph = aistack_stack.run(my_program, config={...})      # or a function
        assert graph.of_type("aws:batch/computeEnvironment:ComputeEnvironment")

`aistack_stack.check(graph)` evaluates the checklist rules and fails the test on any
mandatory violation, listing each with its fix; `aistack_stack.kept(graph, "C5")` fails
unless the item is passing (a rule found something compliant, none failed) or
documented-only, so a stack without the resources an item is about does not pass it.
`aistack_stack.config_error("infra", {"infra:maxNodes": 0})` runs a copy of the project with
that config changed and returns the ConfigError it must raise before registering any
resource.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from aistack.engine.graph import StackGraph
from aistack.errors import ConfigError

__all__ = ["StackRunner", "aistack_stack", "assert_compliant", "assert_kept"]


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


def assert_kept(graph: StackGraph, *checklist_ids: str) -> None:
    """Fail unless each of these checklist items (default: all of them) is kept: passing,
    with a compliant finding and none failing, advisory ones included, or one that no
    resource can prove (documented-only). Stricter than `assert_compliant`, which also
    passes an item no resource in the stack concerns."""
    from aistack import policy

    items = {item.id: item for item in policy.evaluate(graph).items()}
    unknown = sorted(set(checklist_ids) - set(items))
    if unknown:
        raise AssertionError(f"not checklist items: {unknown}")
    lines = []
    for item_id in checklist_ids or tuple(items):
        item = items[item_id]
        if item.state in ("passing", "documented-only"):
            continue
        failed = [f for f in item.findings if f.failed]
        detail = "; ".join(f"{f.rule_id} {f.resource_name}: {f.message}" for f in failed)
        lines.append(f"{item_id} {item.title}: {item.state}" + (f" ({detail})" if detail else ""))
    if lines:
        raise AssertionError("checklist items not kept:\n" + "\n".join(lines))


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
    kept = staticmethod(assert_kept)

    def config_error(
        self, path: str | Path, config: Mapping[str, Any], stack: str = "dev"
    ) -> ConfigError:
        """The ConfigError the project at `path` raises with `config` set in its
        Pulumi.<stack>.yaml (full keys, `project:key`; a value of None removes the key),
        run from a copy; fails the test if it raises none, or registers any resource first."""
        import yaml

        from aistack import engine
        from aistack.engine import runner

        registered: list[str] = []
        register = runner.RecordingMonitor.RegisterResource

        def counting(monitor: Any, request: Any) -> Any:
            if not request.type.startswith(("pulumi:providers:", "pulumi:pulumi:")):
                registered.append(request.name)
            return register(monitor, request)

        with tempfile.TemporaryDirectory(prefix="aistack-config-") as scratch:
            copy = Path(scratch) / "project"
            shutil.copytree(Path(path), copy, ignore=shutil.ignore_patterns("tests", ".venv"))
            stack_file = copy / f"Pulumi.{stack}.yaml"
            document = yaml.safe_load(stack_file.read_text()) or {}
            values = document.setdefault("config", {})
            for key, value in config.items():
                if value is None:
                    values.pop(key, None)
                else:
                    values[key] = value
            stack_file.write_text(yaml.safe_dump(document))
            runner.RecordingMonitor.RegisterResource = counting  # type: ignore[method-assign,assignment]
            try:
                engine.run_project(copy, stack=stack)
            except ConfigError as error:
                if registered:
                    raise AssertionError(
                        f"resources were registered before the ConfigError: {registered}"
                    ) from error
                return error
            finally:
                runner.RecordingMonitor.RegisterResource = register  # type: ignore[method-assign]
        raise AssertionError(f"{path} with {dict(config)} raised no ConfigError")


@pytest.fixture
def aistack_stack() -> StackRunner:
    """Run a Pulumi program or project on aistack's simulated cloud."""
    return StackRunner()
