"""The docs site: every component page ends with its API reference, generated from the code
by the mkdocs hook (tools/docs/api_reference.py); `make test` builds the site strictly."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from aistack._registry import COMPONENTS

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "api_reference", ROOT / "tools" / "docs" / "api_reference.py"
)
assert _spec is not None and _spec.loader is not None
hook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hook)


@pytest.mark.parametrize("spec", COMPONENTS, ids=lambda spec: spec.token)
def test_every_component_page_gets_its_args_and_class_reference(spec):
    assert (ROOT / "docs" / spec.docs_page).is_file()
    page = SimpleNamespace(file=SimpleNamespace(src_uri=spec.docs_page))
    rendered = hook.on_page_markdown("# Page\n", page)
    assert f"::: {spec.args_module or spec.module}.{spec.args}\n" in rendered
    assert f"::: {spec.module}.{spec.cls}\n" in rendered


def test_other_pages_are_left_as_written():
    page = SimpleNamespace(file=SimpleNamespace(src_uri="checklist.md"))
    assert hook.on_page_markdown("# Checklist\n", page) == "# Checklist\n"
