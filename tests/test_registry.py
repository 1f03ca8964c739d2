"""The component registry (aistack/_registry.py) holds: each entry matches its module, its
adapter in the component package and its page, and no component class is missing from it.

Everything that lists the components (the lazy exports of aistack.aws, .gcp and .k8s, the
package's codegen and adapters) derives its list from the registry, so these checks are
what keeps a new component from being half-added.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pulumi
import pytest
from pydantic import BaseModel

from aistack import _registry
from aistack._registry import COMPONENTS, ComponentSpec
from tests.components import conftest  # noqa: F401 - puts components/ on sys.path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PLATFORM_PACKAGES = tuple(f"aistack.{platform}" for platform in _registry.PLATFORMS)


def _ids(spec: ComponentSpec) -> str:
    return spec.name


def token_of(component: type) -> str | None:
    """The token `component` registers: the first argument of its `super().__init__(...)`,
    a string literal (`"aistack:index:AwsNetwork"`) or a module constant (`TOKEN`), the two
    spellings the component modules use. None when its `__init__` names no token (a base
    class that leaves the token to its subclasses)."""
    init = component.__dict__.get("__init__")
    if init is None:
        return None
    tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    module = sys.modules[component.__module__]
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super"
            and node.args
        ):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
        if isinstance(first, ast.Name) and isinstance(getattr(module, first.id, None), str):
            token: str = getattr(module, first.id)
            return token
    return None


def component_classes() -> dict[type, str]:
    """Every `pulumi.ComponentResource` subclass defined in a module of aistack.aws, .gcp or
    .k8s that registers a token, with that token: found by importing every module, so a
    component nobody added to the registry is found all the same."""
    found: dict[type, str] = {}
    for name in PLATFORM_PACKAGES:
        package = importlib.import_module(name)
        modules = [name] + [
            info.name for info in pkgutil.walk_packages(package.__path__, f"{name}.")
        ]
        for module_name in modules:
            module = importlib.import_module(module_name)
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, pulumi.ComponentResource)
                    and value.__module__ == module_name
                    and (token := token_of(value)) is not None
                ):
                    found[value] = token
    return found


@pytest.fixture(scope="module")
def adapters():
    from aistack_components import adapters

    return adapters


def test_the_registry_imports_only_the_standard_library():
    # The platform packages read it at import time: `from aistack import aws` must load
    # neither pulumi nor a cloud SDK (tests/test_layering.py keeps aistack's own imports).
    tree = ast.parse(Path(_registry.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and not node.level
    }
    assert imported - sys.stdlib_module_names - {"__future__"} == set()


def test_tokens_names_classes_and_pages_are_unique():
    for field in ("token", "docs_page"):
        counts = Counter(getattr(spec, field) for spec in COMPONENTS)
        assert [value for value, n in counts.items() if n > 1] == [], field
    counts = Counter((spec.module, spec.cls) for spec in COMPONENTS)
    assert [value for value, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("spec", COMPONENTS, ids=_ids)
def test_each_token_is_the_platform_and_the_class(spec):
    # `aistack:index:GcpNetwork` is gcp.Network: the package's types are named after it.
    prefix = {"aws": "Aws", "gcp": "Gcp", "k8s": "K8s"}[spec.platform]
    assert spec.name == f"{prefix}{spec.cls}"


@pytest.mark.parametrize("spec", COMPONENTS, ids=_ids)
def test_each_module_defines_the_class_its_args_and_its_token(spec):
    module = importlib.import_module(spec.module)
    component = getattr(module, spec.cls)
    assert isinstance(component, type) and issubclass(component, pulumi.ComponentResource)
    assert component.__module__ == spec.module
    # The Args may be defined elsewhere (aistack.aws.inference.args) and re-exported.
    args = getattr(importlib.import_module(spec.args_module), spec.args)
    assert isinstance(args, type) and issubclass(args, BaseModel)
    assert token_of(component) == spec.token
    # A module spelling its token as a constant keeps it equal to the one it registers.
    assert getattr(module, "TOKEN", spec.token) == spec.token


@pytest.mark.parametrize("spec", COMPONENTS, ids=_ids)
def test_each_component_is_exported_by_its_platform_package(spec):
    package = importlib.import_module(f"aistack.{spec.platform}")
    assert {spec.cls, spec.args} <= set(package.__all__)
    assert getattr(package, spec.cls) is getattr(importlib.import_module(spec.module), spec.cls)
    assert getattr(package, spec.args) is getattr(
        importlib.import_module(spec.args_module), spec.args
    )


# The walk imports every module, the deprecated alias modules too, which warn by design.
@pytest.mark.filterwarnings("ignore:.* moved to aistack:DeprecationWarning")
def test_every_component_class_is_in_the_registry():
    registered = {spec.token: spec for spec in COMPONENTS}
    missing = []
    for component, token in component_classes().items():
        spec = registered.get(token)
        if spec is None or (spec.module, spec.cls) != (component.__module__, component.__name__):
            missing.append(f"{component.__module__}.{component.__qualname__} ({token})")
    assert missing == [], "add each component to aistack/_registry.py"


def test_every_spec_has_its_adapter(adapters):
    # The adapter class is named as the token's name, as ComponentProvider requires, and
    # builds the spec's class.
    assert [c.__name__ for c in adapters.COMPONENTS] == [spec.name for spec in COMPONENTS]
    for spec in COMPONENTS:
        adapter = getattr(adapters, spec.name)
        component = getattr(importlib.import_module(spec.module), spec.cls)
        assert adapter._component is component, spec.name


def test_wiring_names_registered_components_only():
    from aistack_components.registry import SPECS, WIRING

    assert set(WIRING) - set(SPECS) == set()


@pytest.mark.parametrize("spec", COMPONENTS, ids=_ids)
def test_each_component_has_its_page(spec):
    page = DOCS / spec.docs_page
    assert page.is_file(), spec.docs_page
    # Each page's title names the component as a Python program writes it (`aws.Network`).
    title = page.read_text().splitlines()[0]
    assert f"{spec.platform}.{spec.cls}" in title.replace("`", ""), title


def test_every_component_page_belongs_to_a_registered_component():
    # A page lives in its platform's folder (components/<platform>/<name>.md); beside the
    # folders there is only the index.
    pages = {p.relative_to(DOCS).as_posix() for p in (DOCS / "components").rglob("*.md")}
    assert pages - {INDEX_PAGE} - {spec.docs_page for spec in COMPONENTS} == set()
    folders = {p.name for p in (DOCS / "components").iterdir() if p.is_dir()}
    assert folders == set(_registry.PLATFORMS)


#: The list of the pages, per platform (docs/components/index.md), rendered from the
#: registry and each page's title; `python -m tests.test_registry` rewrites it.
INDEX_PAGE = "components/index.md"
PLATFORM_TITLES = {
    "aws": "AWS (`aistack.aws`)",
    "gcp": "Google Cloud (`aistack.gcp`)",
    "k8s": "Kubernetes (`aistack.k8s`, any conformant cluster)",
}


def render_index() -> str:
    lines = [
        "# Components",
        "",
        "One page per component, in its platform's folder. This list is rendered from",
        "`aistack/_registry.py` and each page's title; `tests/test_registry.py` fails when it",
        "is stale, and `python -m tests.test_registry` rewrites it.",
    ]
    for platform in _registry.PLATFORMS:
        lines += ["", f"## {PLATFORM_TITLES[platform]}", ""]
        for spec in _registry.by_platform(platform):
            title = (DOCS / spec.docs_page).read_text().splitlines()[0].removeprefix("# ")
            _, _, about = title.partition(" — ")
            link = Path(spec.docs_page).relative_to(Path(INDEX_PAGE).parent).as_posix()
            name = f"{spec.platform}.{spec.cls}"
            lines.append(f"- [`{name}`]({link})" + (f": {about}" if about else ""))
    return "\n".join(lines) + "\n"


def test_the_component_index_lists_every_page_by_platform():
    assert (DOCS / INDEX_PAGE).read_text() == render_index(), (
        "docs/components/index.md is stale: run `python -m tests.test_registry`"
    )


def test_by_platform_and_exports_cover_the_registry():
    assert sum(len(_registry.by_platform(p)) for p in _registry.PLATFORMS) == len(COMPONENTS)
    assert _registry.by_token("GcpNetwork") is _registry.by_token("aistack:index:GcpNetwork")
    assert _registry.exports("k8s")["InferenceServiceArgs"] == "aistack.k8s._inference_args"
    with pytest.raises(ValueError, match="unknown platform"):
        _registry.by_platform("azure")  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        _registry.by_token("AwsNothing")


def test_a_spec_outside_its_platform_is_refused():
    with pytest.raises(ValueError, match="is not in aistack.gcp"):
        ComponentSpec(
            token="aistack:index:GcpNetwork",
            platform="gcp",
            module="aistack.aws.network",
            cls="Network",
            args="NetworkArgs",
            docs_page="components/gcp/network.md",
        )


def test_a_page_outside_its_platform_folder_is_refused():
    with pytest.raises(ValueError, match="is not in components/gcp/"):
        ComponentSpec(
            token="aistack:index:GcpNetwork",
            platform="gcp",
            module="aistack.gcp.network",
            cls="Network",
            args="NetworkArgs",
            docs_page="components/aws/network.md",
        )


if __name__ == "__main__":
    (DOCS / INDEX_PAGE).write_text(render_index())
