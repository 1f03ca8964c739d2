"""mypy reads only the cloud SDK services aistack uses (pyproject.toml, [tool.mypy]): every
service aistack or the component package names, and every top-level module of an SDK,
must be in the list mypy follows, or mypy would take it for Any and check nothing."""

from __future__ import annotations

import re
import tomllib
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SDKS = ("pulumi_aws", "pulumi_gcp", "pulumi_kubernetes")
#: How aistack's modules name the SDKs.
ALIASES = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "k8s": "pulumi_kubernetes"}
ALIASES.update({sdk: sdk for sdk in SDKS})


def _overrides() -> tuple[set[str], set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    skipped: set[str] = set()
    followed: set[str] = set()
    for override in config["overrides"]:
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        target = {"skip": skipped, "normal": followed}.get(override.get("follow_imports"))
        if target is not None:
            target.update(modules)
    return skipped, followed


def _sdk_directory(sdk: str) -> Path:
    spec = find_spec(sdk)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def _services_named() -> dict[str, set[str]]:
    """SDK subpackages named in aistack's and the component package's sources."""
    named: dict[str, set[str]] = {sdk: set() for sdk in SDKS}
    alias = "|".join(ALIASES)
    for root in ("aistack", "components"):
        for path in (ROOT / root).rglob("*.py"):
            text = path.read_text()
            for name, attribute in re.findall(rf"\b({alias})\.([a-z_0-9]+)\b", text):
                named[ALIASES[name]].add(attribute)
            for sdk, names in re.findall(rf"from ({'|'.join(SDKS)}) import ([\w, ]+)", text):
                named[sdk].update(n.split(" as ")[0].strip() for n in names.split(","))
            for sdk, name in re.findall(rf"from ({'|'.join(SDKS)})\.(\w+)", text):
                named[sdk].add(name)
    return named


def test_the_sdks_are_skipped_but_for_the_listed_modules():
    skipped, followed = _overrides()
    assert skipped == {f"{sdk}.*" for sdk in SDKS}
    assert set(SDKS) <= followed


@pytest.mark.parametrize("sdk", SDKS)
def test_mypy_follows_every_service_aistack_uses(sdk):
    _, followed = _overrides()
    directory = _sdk_directory(sdk)
    services = {p.name for p in directory.iterdir() if (p / "__init__.py").exists()}
    used = _services_named()[sdk] & services
    assert used, "no service found: the pattern no longer matches aistack's imports"
    missing = sorted(
        s for s in used if f"{sdk}.{s}" not in followed or f"{sdk}.{s}.*" not in followed
    )
    assert not missing, f"add to pyproject.toml's followed SDK modules: {missing}"


@pytest.mark.parametrize("sdk", SDKS)
def test_mypy_follows_every_top_level_module_of_the_sdk(sdk):
    # The package's __init__ star-imports them: skipped, their names would vanish.
    _, followed = _overrides()
    modules = {p.stem for p in _sdk_directory(sdk).glob("*.py") if p.stem != "__init__"}
    missing = sorted(m for m in modules if f"{sdk}.{m}" not in followed)
    assert not missing, f"add to pyproject.toml's followed SDK modules: {missing}"
