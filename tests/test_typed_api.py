"""The public API a type checker sees is the one Python runs: each platform package's
`TYPE_CHECKING` re-exports name exactly its lazy exports, and the team program that mypy
checks (tests/typed_api/team_program.py, in `make test`) asserts the type of every class."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "typed_api" / "team_program.py"


def type_checking_imports(path: Path) -> dict[str, str]:
    """name -> module of every `X as X` import under `if TYPE_CHECKING:`."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                for alias in statement.names:
                    assert alias.asname == alias.name, "re-export explicitly: `X as X`"
                    found[alias.name] = statement.module
    return found


@pytest.mark.parametrize("platform", ["aws", "gcp", "k8s"])
def test_the_checker_sees_every_lazy_export_from_its_module(platform):
    package = importlib.import_module(f"aistack.{platform}")
    init = ROOT / "aistack" / platform / "__init__.py"
    assert type_checking_imports(init) == package._EXPORTS


@pytest.mark.parametrize("platform", ["aws", "gcp", "k8s"])
# Reading every public name reads the deprecated aliases too, which warn by design.
@pytest.mark.filterwarnings("ignore:.* is now aistack.contracts:DeprecationWarning")
def test_the_team_program_asserts_every_public_class(platform):
    package = importlib.import_module(f"aistack.{platform}")
    classes = {n for n in package.__all__ if inspect.isclass(getattr(package, n))}
    text = PROGRAM.read_text()
    asserted = {
        node.args[0].attr
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "assert_type"
        and isinstance(node.args[0], ast.Attribute)
        and getattr(node.args[0].value, "id", None) == platform
    }
    assert asserted == classes
