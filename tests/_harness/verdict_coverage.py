"""Every rule has a passing and a failing case in the rule tests (tests/policy/rules/).

The rule tests compute a rule's findings through `tests.policy.rules.shared_verdicts.
findings_of` (the `verdicts` fixture and `verdicts_of` call it), which records each
(rule id, status) here, in the process that runs the test. The check needs every rule
test's records, and under pytest-xdist they are spread over the workers; so it is not a
test but this plugin (registered by tests/conftest.py, in every process):

- an xdist worker hands its records to the controller as `workeroutput` when its session
  ends;
- the controller (or the only process, without xdist) gathers them and, after the test
  loop, if every test under tests/policy/rules/ was collected and ran, reports each rule
  id that never got both a compliant and a non-compliant verdict as the failed test
  `tests/policy/rules::every rule has a compliant and a non-compliant case`.

A run of part of the rule tests (a file, a node id, `-k`, `-m`, `--deselect`, stopped
early by `-x`) or one that lost a worker checks nothing: its records say nothing about
the cases it did not run. `ALLOWED` lists, with the reason, the rules that cannot have
one of the two cases; an entry whose rule has both fails the check too, so it only
shrinks.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULE_TESTS = ROOT / "tests" / "policy" / "rules"
NODE_ID = "tests/policy/rules::every rule has a compliant and a non-compliant case"
_OUTPUT_KEY = "aistack_rule_verdicts"
CASES = ("compliant", "non-compliant")

#: Rule id -> (the case it lacks, why no test can have it). Keep it empty if you can.
ALLOWED: dict[str, tuple[str, str]] = {}

#: (rule id, status) pairs this process saw the rule tests compute.
RECORDED: set[tuple[str, str]] = set()


def record(rule_id: str, statuses: Iterable[str]) -> None:
    """Note that a rule test computed `statuses` for `rule_id`."""
    RECORDED.update((rule_id, status) for status in statuses)


def problems(
    rule_ids: Iterable[str],
    seen: Iterable[tuple[str, str]],
    allowed: Mapping[str, tuple[str, str]],
) -> list[str]:
    """What is wrong with the rule tests' cases: a rule missing a case it is not allowed
    to miss, an allowance for a rule that has the case, or for no rule at all."""
    ids = set(rule_ids)
    found = set(seen)
    wrong = []
    for rule_id in sorted(ids):
        for case in CASES:
            present = (rule_id, case) in found
            excused = allowed.get(rule_id, ("", ""))[0] == case
            if not present and not excused:
                wrong.append(f"{rule_id} has no {case} case in tests/policy/rules/")
            elif present and excused:
                wrong.append(
                    f"{rule_id} has a {case} case now: drop it from ALLOWED "
                    "(tests/_harness/verdict_coverage.py)"
                )
    for rule_id in sorted(set(allowed) - ids):
        wrong.append(f"ALLOWED names {rule_id}, which is no rule")
    return wrong


def _under_rule_tests(nodeid: str) -> bool:
    return nodeid.startswith("tests/policy/rules/")


def _names_every_rule_test(config: pytest.Config) -> bool:
    """Whether the session's arguments and options select the whole tests/policy/rules
    tree: an argument naming it or a directory above it, and nothing deselecting."""
    option = config.option
    if (
        getattr(option, "keyword", "")
        or getattr(option, "markexpr", "")
        or getattr(option, "deselect", None)
        or getattr(option, "lf", False)
        or getattr(option, "stepwise", False)
        or getattr(option, "stepwise_skip", False)
    ):
        return False
    for arg in config.args:
        if "::" in arg:
            continue
        for base in (config.invocation_params.dir, config.rootpath):
            path = (Path(base) / arg).resolve()
            if path.is_dir() and (path == RULE_TESTS or path in RULE_TESTS.parents):
                return True
    return False


class RuleCaseCoverage:
    """The plugin: hands records over on a worker, checks them on the controller."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.worker = hasattr(config, "workerinput")
        self.collected: set[str] | None = None
        self.finished: set[str] = set()
        self.seen: set[tuple[str, str]] = set()
        self.lost_a_worker = False

    # -- a worker ---------------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.worker:
            session.config.workeroutput[_OUTPUT_KEY] = sorted(RECORDED)  # type: ignore[attr-defined]

    # -- the controller, or the only process --------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.worker:
            self.collected = {i.nodeid for i in session.items if _under_rule_tests(i.nodeid)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        if self.collected is None:
            self.collected = {nodeid for nodeid in ids if _under_rule_tests(nodeid)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        if error:
            self.lost_a_worker = True
            return
        output = getattr(node, "workeroutput", {})
        self.seen.update((rule_id, status) for rule_id, status in output.get(_OUTPUT_KEY, []))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.worker and report.when == "teardown" and _under_rule_tests(report.nodeid):
            self.finished.add(report.nodeid)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if not self.worker and self._ran_every_rule_test():
            self._check(session)
        return result

    def _ran_every_rule_test(self) -> bool:
        return (
            not self.lost_a_worker
            and bool(self.collected)
            and self.collected <= self.finished
            and _names_every_rule_test(self.config)
        )

    def _check(self, session: pytest.Session) -> None:
        from aistack import policy

        seen = self.seen | RECORDED
        wrong = problems((r.id for r in policy.all_rules()), seen, ALLOWED)
        if not wrong:
            return
        report = pytest.TestReport(
            nodeid=NODE_ID,
            location=("tests/_harness/verdict_coverage.py", None, NODE_ID.split("::")[1]),
            keywords={},
            outcome="failed",
            longrepr="\n".join(
                [
                    "Each rule needs a compliant and a non-compliant case in the rule tests, "
                    "computed through tests/policy/rules/shared_verdicts.findings_of (the "
                    "`verdicts` fixture, verdicts_of):",
                    *(f"  {line}" for line in wrong),
                ]
            ),
            when="call",
        )
        session.config.hook.pytest_runtest_logreport(report=report)
