"""The house map, enforced: who may import whom inside `aistack` (docs/architecture.md).

Read from the source with `ast`, so nothing is imported: every `import` and
`from ... import` of an aistack module counts, lazy imports inside functions and
`TYPE_CHECKING` blocks included (a lazy import is still a dependency a reader must follow),
and so does a module named in a string (`importlib.import_module`, `__import__`,
`resources.files`); `KEPT_CROSSINGS` lists the one crossing kept on purpose, with why.

Five rules:
1. **Floors.** A module imports only from its own package or from a lower floor; the
   packages on one floor are peers and do not import each other (AWS, GCP and Kubernetes
   build on the contracts, never on one another).
2. **No circles** between modules.
3. **No rule imports another rule**: shared graph queries live in `aistack.queries`.
4. **Privates stay home**: `a.b._c` is imported only from inside `a.b`.
5. **Readers read graphs**: queries, rules, cost, scan and report import no component
   package; what they share with the components is in `aistack.contracts`.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "aistack"

#: The floors, lowest first. Each entry names a top-level module or package of `aistack`.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("_extras",),
    ("catalog",),
    ("config", "_lazy"),
    # The SDK-free vocabulary every layer above reads: tags, labels, limits, shared shapes,
    # and the one list of components every tool derives its own from.
    ("contracts", "_registry"),
    # What components of every cloud share: resource options, GitHub OIDC, dataset
    # metadata, the gateway's nginx config; then the node scripts and the serving node,
    # which carry that config.
    ("_options", "_adopt", "_github", "dataset_metadata", "gateway"),
    ("node",),
    # The platforms, and the simulated cloud that runs them: peers, none above another.
    ("aws", "gcp", "k8s", "engine"),
    ("queries",),
    ("policy", "cost", "scan"),
    ("report", "testing"),
    ("cli",),
)

#: Old module paths kept one release for users who import them (CHANGELOG): each only
#: re-exports its new home and warns. Nothing inside aistack imports them.
DEPRECATED_ALIASES = frozenset({"images", "model_versions"})

RULES = "aistack.policy.rules"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(path: Path, name: str, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The aistack modules `path` imports, each the most specific module that exists
    (`from aistack.errors import Problems` is `aistack.errors`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and _names_a_module(node):
            # `importlib.import_module("aistack.x")`, `__import__(...)`, and
            # `resources.files("aistack.x")` (reading a package's files loads the package).
            targets = [node.args[0].value]  # type: ignore[attr-defined]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" for alias in node.names] or [source]
            targets = [t if t in known else source for t in targets]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            # A module reading its own package's files needs nothing it has not loaded.
            own = isinstance(node, ast.Call) and (name + ".").startswith(target + ".")
            if target.startswith("aistack") and target != name and not own:
                yield target, node.lineno


#: Calls whose first argument, a string, names a module they load.
MODULE_LOADERS = frozenset({"import_module", "__import__", "files"})


def _names_a_module(call: ast.Call) -> bool:
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return (
        called in MODULE_LOADERS
        and bool(call.args)
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
        and call.args[0].value.startswith("aistack")
    )


@functools.cache
def graph() -> dict[str, dict[str, int]]:
    known = modules()
    edges: dict[str, dict[str, int]] = defaultdict(dict)
    for name, path in known.items():
        for target, line in imported(path, name, known):
            edges[name].setdefault(target, line)
    return edges


def top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


FLOOR_OF = {part: floor for floor, parts in enumerate(FLOORS) for part in parts}


def test_every_top_level_module_has_a_floor():
    tops = {top(name) for name in modules()} - {""} - DEPRECATED_ALIASES
    assert tops - set(FLOOR_OF) == set(), "add each new top-level module to FLOORS"


#: Crossings kept on purpose, each with its reason; the test fails on any other and on an
#: entry that is gone.
KEPT_CROSSINGS = {
    # serve.sh is read from aistack/aws/serving/, where every rendered serving boot script
    # says it is documented: moving it changes every serving node's user data, so it moves
    # with the next deliberate change of those scripts.
    ("aistack.node.serving", "aistack.aws"),
}


def test_imports_point_down_the_floors():
    upward = []
    for name, targets in graph().items():
        source = top(name)
        if source in DEPRECATED_ALIASES or not source:
            continue
        for target, line in targets.items():
            goal = top(target)
            if goal == source or not goal or (name, target) in KEPT_CROSSINGS:
                continue
            if goal in DEPRECATED_ALIASES:
                upward.append(f"{name}:{line} imports the deprecated alias {target}")
            elif FLOOR_OF[goal] >= FLOOR_OF[source]:
                kind = "a peer" if FLOOR_OF[goal] == FLOOR_OF[source] else "a higher floor"
                upward.append(f"{name}:{line} imports {target}, {kind}")
    assert upward == []
    edges = graph()
    gone = {(name, target) for name, target in KEPT_CROSSINGS if target not in edges[name]}
    assert gone == set(), "a kept crossing is gone: drop it from KEPT_CROSSINGS"


def test_no_import_circles():
    edges = graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, {})):
            if (node, target) in KEPT_CROSSINGS:
                continue
            if state.get(target) == 1:
                circles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert circles == []


def test_no_rule_imports_another_rule():
    crossing = sorted(
        f"{name}:{line} imports {target}"
        for name, targets in graph().items()
        if name.startswith(RULES + ".")
        for target, line in targets.items()
        if target.startswith(RULES + ".")
    )
    assert crossing == [], "shared helpers of rules belong in aistack.queries"


#: The layers that read a recorded graph, and the platform packages that build one.
READERS = ("queries", "policy", "cost", "scan", "report")
PLATFORMS = ("aws", "gcp", "k8s")


def test_what_reads_a_graph_never_imports_a_component():
    # Rules, queries, estimators and scanners judge resources as recorded, so they judge a
    # stack built without aistack's components the same way; what they share with the
    # components is in aistack.contracts.
    reaching = [
        f"{name}:{line} imports {target}"
        for name, targets in graph().items()
        if top(name) in READERS
        for target, line in targets.items()
        if top(target) in PLATFORMS
    ]
    assert reaching == []


def test_private_modules_are_imported_only_from_their_own_package():
    trespass = []
    for name, targets in graph().items():
        for target, line in targets.items():
            home, _, leaf = target.rpartition(".")
            private = leaf.startswith("_") and not leaf.startswith("__")
            if private and not (name == home or name.startswith(home + ".")):
                trespass.append(f"{name}:{line} imports {target}")
    assert trespass == []


@pytest.mark.parametrize(
    ("source", "importer", "problem"),
    [
        ("from aistack.cli import main\n", "aistack.queries.x", "a higher floor"),
        ("from aistack.gcp import Network\n", "aistack.aws.x", "a peer"),
        ("importlib.import_module('aistack.cli')\n", "aistack.queries.x", "by name"),
        ("resources.files('aistack.aws').joinpath('x')\n", "aistack.node.x", "read"),
    ],
)
def test_the_floor_check_sees_an_upward_import(tmp_path, source, importer, problem):
    # The check itself can fail: an importer on a lower floor naming a higher or peer one.
    path = tmp_path / "x.py"
    path.write_text(source)
    known = modules()
    targets = dict(imported(path, importer, known))
    (target,) = targets
    assert FLOOR_OF[top(target)] >= FLOOR_OF[top(importer)], problem
