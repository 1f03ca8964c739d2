"""The rules as a catalog: one module per rule, named by the rule's id, each `check` typed
alike; and the session check that every rule has a compliant and a non-compliant case
(tests/_harness/verdict_coverage.py), shown able to fail."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from aistack import engine, policy
from tests._harness import verdict_coverage
from tests.policy.rules.shared_verdicts import findings_of

RULES = Path(policy.__file__).parent / "rules"


def _modules() -> list[Path]:
    return sorted(p for p in RULES.glob("*/*.py") if p.name != "__init__.py")


def _declared(path: Path) -> list[tuple[str, ast.FunctionDef]]:
    """(id, function) for each `@rule(id=...)` in a module's source."""
    found = []
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "rule":
                (rule_id,) = [k.value for k in decorator.keywords if k.arg == "id"]
                assert isinstance(rule_id, ast.Constant), f"{path}: the id is not a literal"
                found.append((str(rule_id.value), node))
    return found


def _suffix(rule_id: str) -> str:
    """AIS-C6-01 -> c6_01."""
    return rule_id.removeprefix("AIS-").lower().replace("-", "_")


def test_every_rule_module_defines_exactly_one_rule():
    counts = {p.relative_to(RULES).as_posix(): len(_declared(p)) for p in _modules()}
    assert counts, "no rule modules found"
    assert {module: n for module, n in counts.items() if n != 1} == {}, (
        "one rule per module; what rules share is a query (aistack/queries/)"
    )


def test_every_rule_lives_in_a_module_named_by_its_id():
    misnamed = []
    for rule in policy.all_rules():
        stem = rule.check.__module__.rpartition(".")[2]
        suffix = _suffix(rule.id)
        if stem != suffix and not stem.startswith(suffix + "_"):
            misnamed.append(f"{rule.id} is in {rule.check.__module__}, not {suffix}_<topic>")
    assert misnamed == []


def test_rule_ids_are_unique_and_the_sources_declare_every_registered_rule():
    declared = [rule_id for path in _modules() for rule_id, _ in _declared(path)]
    assert [i for i, n in Counter(declared).items() if n > 1] == []
    assert sorted(declared) == [r.id for r in policy.all_rules()]


def test_every_check_takes_a_stack_graph_and_yields_verdicts():
    untyped = [
        f"{path.relative_to(RULES)}: def {function.name}({ast.unparse(function.args)})"
        + (f" -> {ast.unparse(function.returns)}" if function.returns else "")
        for path in _modules()
        for _, function in _declared(path)
        if function.name != "check"
        or ast.unparse(function.args) != "graph: StackGraph"
        or function.returns is None
        or ast.unparse(function.returns) != "Iterator[Verdict]"
    ]
    assert untyped == []


# ---- every rule has a compliant and a non-compliant case ------------------------------


def test_the_case_check_names_a_rule_without_a_failing_case():
    seen = {
        ("AIS-D1-01", "compliant"),
        ("AIS-D1-01", "non-compliant"),
        ("AIS-D1-02", "compliant"),
        ("AIS-D1-02", "not-applicable"),
    }
    assert verdict_coverage.problems(["AIS-D1-01", "AIS-D1-02"], seen, {}) == [
        "AIS-D1-02 has no non-compliant case in tests/policy/rules/"
    ]


def test_an_allowance_excuses_its_case_only_and_fails_once_the_case_exists():
    allowed = {"AIS-D1-02": ("non-compliant", "no resource can fail it")}
    only_passing = {("AIS-D1-02", "compliant")}
    assert verdict_coverage.problems(["AIS-D1-02"], only_passing, allowed) == []
    assert verdict_coverage.problems(["AIS-D1-02"], set(), allowed) == [
        "AIS-D1-02 has no compliant case in tests/policy/rules/"
    ]
    both = only_passing | {("AIS-D1-02", "non-compliant")}
    assert verdict_coverage.problems(["AIS-D1-02"], both, allowed) == [
        "AIS-D1-02 has a non-compliant case now: drop it from ALLOWED "
        "(tests/_harness/verdict_coverage.py)"
    ]
    assert verdict_coverage.problems([], set(), allowed) == [
        "ALLOWED names AIS-D1-02, which is no rule"
    ]


def test_allowances_name_a_rule_a_case_and_a_reason():
    ids = {r.id for r in policy.all_rules()}
    for rule_id, (case, reason) in verdict_coverage.ALLOWED.items():
        assert rule_id in ids and case in verdict_coverage.CASES and reason.strip(), rule_id


def test_findings_of_records_the_statuses_it_computed(monkeypatch):
    # A fresh record: what this test computes must not count as a rule test's case.
    recorded: set[tuple[str, str]] = set()
    monkeypatch.setattr(verdict_coverage, "RECORDED", recorded)
    findings_of("AIS-D1-01", engine.run(lambda: None))
    assert recorded == {("AIS-D1-01", "not-applicable")}


def _config(*args: str, keyword: str = "", invocation: Path | None = None) -> SimpleNamespace:
    root = verdict_coverage.ROOT
    return SimpleNamespace(
        args=list(args),
        option=SimpleNamespace(keyword=keyword, markexpr="", deselect=None),
        invocation_params=SimpleNamespace(dir=invocation or root),
        rootpath=root,
    )


@pytest.mark.parametrize(
    ("args", "keyword", "invocation", "whole"),
    [
        (("tests", "stacks"), "", None, True),  # pyproject's testpaths: the whole suite
        (("tests/policy",), "", None, True),
        (("rules",), "", "tests/policy", True),
        (("tests/policy/rules",), "", None, True),
        (("tests/policy/rules/aws",), "", None, False),
        (("tests/policy/rules/aws/test_c1_rules.py",), "", None, False),
        (("tests/policy/rules::x",), "", None, False),
        (("tests/policy",), "c1", None, False),
        (("tests/aws",), "", None, False),
    ],
)
def test_the_case_check_runs_only_when_the_whole_rule_tree_is_selected(
    args, keyword, invocation, whole
):
    where = verdict_coverage.ROOT / invocation if invocation else None
    config = _config(*args, keyword=keyword, invocation=where)
    assert verdict_coverage._names_every_rule_test(config) is whole  # type: ignore[arg-type]
