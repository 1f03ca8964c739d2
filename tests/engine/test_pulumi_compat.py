"""The engine's one module of Pulumi SDK internals fits the installed SDK, fails loudly
when it no longer does, and states the range pyproject.toml installs."""

from __future__ import annotations

import re
import tomllib
import warnings
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from pulumi.runtime import mocks, resource, settings, stack

from aistack.engine import pulumi_compat
from aistack.errors import AistackError

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_sdk_has_everything_the_engine_relies_on():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # outside the tested range would warn
        pulumi_compat.check()


def test_the_installed_sdk_is_inside_the_stated_range():
    installed = Version(pulumi_compat.installed_version())
    assert installed in SpecifierSet(pulumi_compat.SUPPORTED)
    assert Version(pulumi_compat.TESTED_WITH) in SpecifierSet(pulumi_compat.SUPPORTED)


def test_the_stated_range_is_the_one_pyproject_installs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (pulumi,) = [
        Requirement(line) for line in project["dependencies"] if Requirement(line).name == "pulumi"
    ]
    assert pulumi.specifier == SpecifierSet(pulumi_compat.SUPPORTED)


@pytest.mark.parametrize(
    ("module", "attribute", "named"),
    [
        (resource, "_get_stack_trace", "pulumi.runtime.resource._get_stack_trace"),
        (stack, "wait_for_rpcs", "pulumi.runtime.stack.wait_for_rpcs"),
        (mocks, "_sync_await", "pulumi.runtime.mocks._sync_await"),
        (settings, "_get_rpc_manager", "pulumi.runtime.settings._get_rpc_manager"),
        (mocks, "MockMonitor", "pulumi.runtime.mocks.MockMonitor"),
    ],
)
def test_a_missing_attribute_fails_the_check_naming_it(monkeypatch, module, attribute, named):
    monkeypatch.delattr(module, attribute)
    with pytest.raises(pulumi_compat.UnsupportedPulumiError) as error:
        pulumi_compat.check()
    message = str(error.value)
    assert f"{named} is missing" in message
    assert f"pulumi {pulumi_compat.installed_version()}" in message
    assert pulumi_compat.SUPPORTED in message
    assert isinstance(error.value, AistackError) and isinstance(error.value, RuntimeError)


def test_a_changed_signature_fails_the_check(monkeypatch):
    def traced(depth):  # what a release that took a parameter would look like
        return None

    monkeypatch.setattr(resource, "_get_stack_trace", traced)
    with pytest.raises(pulumi_compat.UnsupportedPulumiError, match=r"_get_stack_trace takes"):
        pulumi_compat.check()


def test_outputs_tracked_in_another_container_fail_the_check(monkeypatch):
    # Older SDKs kept pending outputs in a deque: the linear wait's `update` would fail.
    from collections import deque

    monkeypatch.setattr(settings.SETTINGS, "outputs", deque())
    with pytest.raises(pulumi_compat.UnsupportedPulumiError, match=r"SETTINGS\.outputs is a deque"):
        pulumi_compat.check()


def test_every_problem_is_in_one_message(monkeypatch):
    monkeypatch.delattr(resource, "_get_stack_trace")
    monkeypatch.delattr(settings, "_get_rpc_manager")
    with pytest.raises(pulumi_compat.UnsupportedPulumiError) as error:
        pulumi_compat.check()
    assert re.search(r"_get_stack_trace is missing.*_get_rpc_manager is missing", str(error.value))


def test_a_version_outside_the_range_warns(monkeypatch):
    monkeypatch.setattr(pulumi_compat, "installed_version", lambda: "3.999.0")
    with pytest.warns(pulumi_compat.UntestedPulumiWarning, match=r"pulumi 3\.999\.0"):
        pulumi_compat.check()


def test_the_fast_runtime_is_restored_after_an_error():
    before = stack.wait_for_rpcs, resource._get_stack_trace, mocks._sync_await  # type: ignore[attr-defined]
    with pytest.raises(ZeroDivisionError), pulumi_compat.fast_runtime():
        assert stack.wait_for_rpcs is pulumi_compat.wait_for_rpcs
        assert mocks._sync_await is pulumi_compat.run_now  # type: ignore[attr-defined]
        1 / 0  # noqa: B018
    assert (stack.wait_for_rpcs, resource._get_stack_trace, mocks._sync_await) == before  # type: ignore[attr-defined]
