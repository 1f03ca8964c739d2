"""Writes `args.py` (TypedDicts and enums from aistack's pydantic Args) and `schema.json`.

One source of truth: the pydantic Args in `aistack.aws.*` say what each component takes; this
module turns them into the annotations Pulumi's component analyzer can read
(`pulumi.provider.experimental.analyzer`), which cannot read `Args | dict`, `Literal`, string
forward references or pydantic defaults:

* a model becomes a `TypedDict`; a field with a default becomes `NotRequired`, its default
  written into its description (the analyzer would otherwise make it required);
* a `Literal` becomes a `StrEnum` (inside a list it stays `str`: the provider in pulumi
  3.272 maps a list of enums to a list of empty objects, `map_input_properties`);
* a union the schema cannot express (`int | Literal["auto"]`) becomes `Any`;
* a field that takes another component's Output (an `InputStr`, or one of the model's
  `output_keywords`) becomes a non-plain `pulumi.Input[str]`; everything else is plain.

`python -m aistack_components.codegen` (`make schema`) rewrites both files; the tests in
tests/components/ fail when either differs from what this module renders.
"""

import ast
import contextlib
import importlib
import inspect
import json
import re
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.alias_generators import to_pascal
from pydantic_core import PydanticUndefined

from aistack_components.registry import (
    ADAPTERS_MODULE,
    PACKAGE,
    SPECS,
    VERSION,
    WIRING,
)

__all__ = ["CONFIGS", "args_model", "main", "render_args", "render_schema"]

HERE = Path(__file__).resolve().parent
ARGS_FILE = HERE / "args.py"
SCHEMA_FILE = HERE.parent / "schema.json"

#: Token name -> (module, Args class), from aistack's registry (aistack/_registry.py): the
#: order args.py is written in.
CONFIGS: dict[str, tuple[str, str]] = {
    name: (spec.args_module, spec.args) for name, spec in SPECS.items()
}

HEADER = '''"""GENERATED from aistack's pydantic Args by aistack_components/codegen.py: do not edit.

Run `make schema` after changing an Args model; tests/components/ fails until then. Each
`<Token>Args` holds one component's inputs as Pulumi's analyzer reads it: its configuration
plain, with enums for choices and `NotRequired` where the Args have a default (said in the
text), then the ids and ARNs that wire it to other components, as `pulumi.Input`.
"""

import enum
from typing import {typing_names}

import pulumi
'''


def args_model(token: str) -> type[BaseModel]:
    module, name = CONFIGS[token]
    model: type[BaseModel] = getattr(importlib.import_module(module), name)
    return model


def _is_input_str(annotation: Any) -> bool:
    """`Annotated[Any, AfterValidator(...)]`: a string or an Output (aistack.aws.notebook)."""
    return get_origin(annotation) is Annotated and get_args(annotation)[0] is Any


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def _enum_member(value: str) -> str:
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", value)
    return re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").upper() or "EMPTY"


def _default_text(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            return "Default: its own defaults."
    else:
        value = field.default
    if value is PydanticUndefined or value is None:
        return ""
    if isinstance(value, bool):
        shown = str(value).lower()
    elif isinstance(value, tuple | list):
        shown = json.dumps(list(value), default=_dumped)
    elif isinstance(value, dict):
        shown = json.dumps(value, default=_dumped)
    else:
        shown = json.dumps(value) if isinstance(value, str) else repr(value)
    return f"Default: {shown}."


def _dumped(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    raise TypeError(f"no JSON for {value!r}")


class _Renderer:
    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.names: dict[Any, str] = {}

    def type_name(self, model: type[BaseModel]) -> str:
        base = model.__name__.removesuffix("Args")
        for cloud, prefix in (
            ("aistack.aws", "Aws"),
            ("aistack.gcp", "Gcp"),
            ("aistack.k8s", "K8s"),
        ):
            if model.__module__.startswith(cloud):
                return f"{prefix}{base}"
        return base

    def annotation(self, annotation: Any, owner: str, field: str, *, in_list: bool = False) -> str:
        annotation = _without_none(annotation)
        if _is_input_str(annotation):
            return "pulumi.Input[str]"
        if get_origin(annotation) is Annotated:
            return self.annotation(get_args(annotation)[0], owner, field, in_list=in_list)
        if annotation in (str, int, float, bool):
            return annotation.__name__
        if annotation is Any:
            return "Any"
        origin = get_origin(annotation)
        if origin is Literal:
            if in_list:
                return "str"
            return self.enum(get_args(annotation), f"{owner}{to_pascal(field)}")
        if origin in (tuple, list):
            item = get_args(annotation)[0]
            return f"list[{self.annotation(item, owner, field, in_list=True)}]"
        if origin is dict:
            value = get_args(annotation)[1]
            return f"dict[str, {self.annotation(value, owner, field, in_list=True)}]"
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self.model(annotation)
        if origin in (Union, types.UnionType):
            return "Any"
        raise TypeError(f"{owner}.{field}: no schema type for {annotation!r}")

    def enum(self, values: tuple[Any, ...], name: str) -> str:
        if name not in self.names.values():
            lines = [f"class {name}(enum.StrEnum):"]
            lines += [f"    {_enum_member(str(v))} = {json.dumps(v)}" for v in values]
            self.blocks.append("\n".join(lines))
            self.names[("enum", name)] = name
        return name

    def model(self, model: type[BaseModel], token: str | None = None) -> str:
        if model in self.names and token is None:
            return self.names[model]
        name = f"{token}Args" if token else self.type_name(model)
        prefix = token or name
        self.names[model] = name
        doc = " ".join(_summary(model).split())
        if token:
            doc = (
                f"The inputs of {token}: its configuration, validated into "
                f"{model.__module__}.{model.__name__} as a Python caller's is, and its wiring."
            )
        body = [_docstring(doc, "    ")]
        wired = getattr(model, "output_keywords", frozenset())
        fields = []
        for field_name, info in model.model_fields.items():
            if field_name in wired:
                text = "pulumi.Input[str]"
            else:
                text = self.annotation(info.annotation, prefix, field_name)
            if not info.is_required():
                text = f"NotRequired[{text}]"
            nested = _without_none(info.annotation)
            description = " ".join((info.description or "").split()) or (
                _summary(nested) if isinstance(nested, type) else ""
            )
            default = "" if info.is_required() else _default_text(info)
            fields.append(f"    {field_name}: {text}")
            fields.append(_docstring(" ".join(p for p in (description, default) if p), "    "))
        for field_name, kind, required, description in WIRING.get(token or "", []):
            text = (
                kind.removeprefix("plain:")
                if kind.startswith("plain:")
                else f"pulumi.Input[{kind}]"
            )
            fields.append(f"    {field_name}: {text if required else f'NotRequired[{text}]'}")
            fields.append(_docstring(description, "    "))
        self.blocks.append(f"class {name}(TypedDict):\n" + "\n".join(body + [""] + fields))
        return name


def _summary(model: type) -> str:
    """The first paragraph of a class's docstring."""
    return (model.__doc__ or "").strip().split("\n\n")[0]


def _docstring(text: str, indent: str) -> str:
    text = (text or "(no description)").replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = textwrap.wrap(text, width=92 - len(indent), break_on_hyphens=False) or [""]
    if len(lines) == 1 and len(lines[0]) + len(indent) + 6 <= 100:
        return f'{indent}"""{lines[0]}"""'
    return "\n".join([f'{indent}"""{lines[0]}'] + [indent + line for line in lines[1:]]) + (
        f'\n{indent}"""'
    )


def _ruff_format(source: str) -> str:
    """The text as `ruff format` writes it, so the checked-in file passes `make lint`."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(ARGS_FILE), "-"],
        input=source,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def render_args() -> str:
    """The source of args.py for the Args as they are now."""
    renderer = _Renderer()
    for token in CONFIGS:
        renderer.model(args_model(token), token)
    body = "\n\n\n".join(renderer.blocks)
    names = ["Any"] if re.search(r"\bAny\b", body) else []
    header = HEADER.replace("{typing_names}", ", ".join([*names, "NotRequired", "TypedDict"]))
    return _ruff_format(header + "\n\n" + body + "\n")


def render_schema(components: Sequence[type]) -> str:
    """The package schema Pulumi infers from the adapter classes `components` (offline, no
    CLI). The caller hands them over: codegen does not import the adapters, which import
    what codegen writes."""
    from pulumi.provider.experimental.component import ComponentProvider

    with sources_parsed_once():
        schema = json.loads(ComponentProvider(list(components), PACKAGE, version=VERSION).schema)
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


@contextlib.contextmanager
def sources_parsed_once() -> Iterator[None]:
    """Within the block, `ast.parse` parses each source text once, and a class is found in
    a parsed module by one walk of its tree, not one walk per class.

    Pulumi's analyzer (ComponentProvider, pulumi 3.272) reads every input type's property
    docstrings from its source: `inspect.getsource(type)`, then `ast.parse`. On Python
    3.11 `inspect.getsource` of a class parses the class's whole module to find it, so the
    150 TypedDicts of args.py had its 3,300 lines parsed 150 times: about 6 s of the 7 s
    the provider took to build. The analyzer and inspect only read the trees, so handing
    back the tree of the same text again is what a new parse would give. Finding the class
    then walked that tree from the top (`inspect._ClassFinder`) once per class: 0.9 s of
    the 1.1 s left; `_ClassPositions` walks each tree once, the same way, and answers
    every class of it.
    """
    original = ast.parse
    trees: dict[tuple[str, str], Any] = {}

    def parse(source: Any, filename: Any = "<unknown>", mode: str = "exec", **options: Any) -> Any:
        if options or mode != "exec" or not isinstance(source, str):
            return original(source, filename, mode, **options)
        key = (source, str(filename))
        if key not in trees:
            trees[key] = original(source, filename, mode)
        return trees[key]

    # Python 3.11 and 3.12 find a class this way; 3.13 reads `__firstlineno__` instead.
    finder = getattr(inspect, "_ClassFinder", None)
    found = getattr(inspect, "ClassFoundException", None)
    ast.parse = parse  # type: ignore[assignment]
    if finder is not None and found is not None:
        inspect._ClassFinder = _class_finder_over_positions(finder, found)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        ast.parse = original  # type: ignore[assignment]
        if finder is not None:
            inspect._ClassFinder = finder  # type: ignore[attr-defined]


def _class_finder_over_positions(finder: type, found: type[Exception]) -> type:
    """`inspect._ClassFinder(qualname).visit(tree)` answered from one walk per tree: it
    raises `ClassFoundException(line)` for the first class of that qualified name in the
    order inspect's own walk meets them, and returns when there is none, as inspect's does."""
    positions: dict[int, tuple[Any, dict[str, int]]] = {}

    class ClassPositions(finder):  # type: ignore[misc, valid-type]
        """inspect's walk, recording every class's line instead of stopping at one."""

        def __init__(self) -> None:
            super().__init__(qualname=None)
            self.lines: dict[str, int] = {}

        def visit_ClassDef(self, node: ast.ClassDef) -> None:  # noqa: N802 - ast's name
            self.stack.append(node.name)
            line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            self.lines.setdefault(".".join(self.stack), line - 1)  # inspect counts from 0
            self.generic_visit(node)
            self.stack.pop()

    class IndexedClassFinder:
        def __init__(self, qualname: str) -> None:
            self.qualname = qualname

        def visit(self, tree: Any) -> None:
            kept = positions.get(id(tree))
            if kept is None or kept[0] is not tree:
                walk = ClassPositions()
                walk.visit(tree)
                kept = positions[id(tree)] = (tree, walk.lines)
            if self.qualname in kept[1]:
                raise found(kept[1][self.qualname])

    return IndexedClassFinder


def main() -> None:
    ARGS_FILE.write_text(render_args())
    # The adapters import args.py: render the schema from the file just written.
    for module in (ADAPTERS_MODULE, "aistack_components.args"):
        sys.modules.pop(module, None)
    SCHEMA_FILE.write_text(render_schema(importlib.import_module(ADAPTERS_MODULE).COMPONENTS))
    print(f"wrote {ARGS_FILE.relative_to(Path.cwd())} and {SCHEMA_FILE.relative_to(Path.cwd())}")


if __name__ == "__main__":
    main()
