"""mkdocs hook: every component page ends with its API reference, generated from the code.

The page (docs/components/<platform>/<name>.md) says what the component creates and why;
the reference below it is rendered by mkdocstrings from the Args' fields (each one's
`Field(...)`: default, bounds, description) and the component's docstring, outputs and
methods. The list
of pages comes from `aistack._registry.COMPONENTS`, so a new component gets its reference
without editing a page.
"""

from __future__ import annotations

from typing import Any

from aistack._registry import COMPONENTS

_BY_PAGE = {spec.docs_page: spec for spec in COMPONENTS}


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    spec = _BY_PAGE.get(page.file.src_uri)
    if spec is None:
        return markdown
    args_module = spec.args_module or spec.module
    return (
        f"{markdown.rstrip()}\n\n## API reference\n\n"
        f"::: {args_module}.{spec.args}\n    options:\n      heading_level: 3\n\n"
        f"::: {spec.module}.{spec.cls}\n    options:\n      heading_level: 3\n"
        # Its outputs and methods; how an attribute is computed is the code's business.
        "      show_attribute_values: false\n"
    )
