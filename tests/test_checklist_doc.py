"""docs/checklist.md is checked against the rules, the tests and the checklist: it cannot drift."""

import re
from pathlib import Path

from aistack import policy
from aistack.policy import CHECKLIST, DOCUMENTED_ONLY

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "checklist.md"


def _rows() -> dict[str, dict[str, str]]:
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in CHECKLIST:
            item_id, item, implemented_by, rules, tests, status = cells
            rows[item_id] = {
                "item": item,
                "implemented_by": implemented_by,
                "rules": rules,
                "tests": tests,
                "status": status,
            }
    return rows


def test_every_checklist_item_has_exactly_one_row():
    assert sorted(_rows()) == sorted(CHECKLIST)


def test_rules_named_in_the_doc_exist_and_cover_that_item():
    rules = {rule.id: rule for rule in policy.all_rules()}
    for item_id, row in _rows().items():
        for rule_id in re.findall(r"AIS-[A-Z]\d-\d\d", row["rules"]):
            assert rule_id in rules, f"{item_id}: unknown rule {rule_id}"
            assert item_id in rules[rule_id].checklist, f"{rule_id} does not cover {item_id}"


def test_every_rule_is_listed_under_every_item_it_covers():
    rows = _rows()
    for rule in policy.all_rules():
        for item_id in rule.checklist:
            assert rule.id in rows[item_id]["rules"], f"{rule.id} missing from {item_id}'s row"


def test_tests_named_in_the_doc_exist():
    for item_id, row in _rows().items():
        for path in re.findall(r"`(tests/[^`:]+?\.py)", row["tests"]):
            assert (ROOT / path).is_file(), f"{item_id}: {path} does not exist"


def test_status_matches_rules_and_documented_only_items():
    rules = policy.all_rules()
    for item_id, row in _rows().items():
        covered = any(item_id in rule.checklist for rule in rules)
        if item_id in DOCUMENTED_ONLY:
            assert row["status"].startswith("documented only"), item_id
        elif covered:
            assert row["status"].startswith("implemented"), item_id
            assert re.search(r"`tests/", row["tests"]), f"{item_id}: no test named"
        else:
            assert row["status"].startswith("not yet"), f"{item_id}: claims {row['status']}"
