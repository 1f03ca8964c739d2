"""The rule framework: registration, findings, checklist states and the score."""

import pulumi_aws as aws
import pytest

from aistack import engine, policy
from aistack.policy import CHECKLIST, DOCUMENTED_ONLY, Rule, fail, ok


def test_every_rule_id_names_its_first_checklist_item_and_has_why_and_fix():
    rules = policy.all_rules()
    assert rules
    for rule in rules:
        assert rule.id.startswith(f"AIS-{rule.checklist[0]}-")
        assert set(rule.checklist) <= set(CHECKLIST)
        assert rule.info and rule.why and rule.fix


def test_a_rule_with_an_unknown_checklist_id_is_refused():
    with pytest.raises(ValueError):
        policy.rule(id="AIS-Z9-01", checklist=["Z9"], info="i", why="w", fix="f")


def test_findings_carry_resource_and_fix_and_states_roll_up():
    def check(graph):
        for bucket in graph.of_type("aws:s3/bucket:Bucket"):
            yield (ok if bucket.name == "good" else fail)(bucket, "checked")

    rule = Rule("AIS-D1-99", ("D1",), "mandatory", "info", "why", "the fix", check)
    graph = engine.run(lambda: [aws.s3.Bucket("good"), aws.s3.Bucket("bad")])
    report = policy.evaluate(graph, [rule])
    bad = next(f for f in report.findings if f.resource_name == "bad")
    assert bad.status == "non-compliant" and bad.fix == "the fix"
    assert bad.resource_type == "aws:s3/bucket:Bucket"
    assert report.mandatory_violations == [bad]
    states = {item.id: item.state for item in report.items()}
    assert states["D1"] == "failing"
    assert states["C1"] == "no-rule"
    for item_id in DOCUMENTED_ONLY:
        assert states[item_id] == "documented-only"


def test_a_rule_with_nothing_to_check_is_not_applicable():
    rule = Rule("AIS-D1-98", ("D1",), "mandatory", "i", "w", "f", lambda graph: [])
    report = policy.evaluate(engine.run(lambda: None), [rule])
    assert [f.status for f in report.findings] == ["not-applicable"]
    assert {i.id: i.state for i in report.items()}["D1"] == "not-applicable"


def test_score_counts_passing_and_documented_items():
    rule = Rule("AIS-D1-97", ("D1",), "mandatory", "i", "w", "f", lambda graph: [ok(None, "fine")])
    report = policy.evaluate(engine.run(lambda: None), [rule])
    assert report.score() == (1 + len(DOCUMENTED_ONLY), len(CHECKLIST))
