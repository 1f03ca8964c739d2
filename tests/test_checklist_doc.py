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


# ---- the Kubernetes table ------------------------------------------------------------------

OWNERS = {"Kubernetes", "the cloud", "documented only", "not yet"}


def _kubernetes_rows() -> dict[str, dict[str, str]]:
    text = DOC.read_text()
    section = text[text.index("\n## On Kubernetes\n") :]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in CHECKLIST:
            assert cells[0] not in rows, f"{cells[0]} twice in the Kubernetes table"
            rows[cells[0]] = {"what": cells[1], "rules": cells[2], "owner": cells[3]}
    return rows


def _kubernetes_rules() -> dict[str, set[str]]:
    """Checklist id -> the rules that judge Kubernetes objects (aistack/policy/rules/k8s/)."""
    found: dict[str, set[str]] = {}
    for rule in policy.all_rules():
        if ".rules.k8s." in rule.check.__module__:
            for item_id in rule.checklist:
                found.setdefault(item_id, set()).add(rule.id)
    return found


def test_the_kubernetes_table_has_one_row_per_item_with_an_owner():
    rows = _kubernetes_rows()
    assert sorted(rows) == sorted(CHECKLIST)
    for item_id, row in rows.items():
        assert row["owner"] in OWNERS, f"{item_id}: owner {row['owner']!r}"
        if item_id in DOCUMENTED_ONLY:
            assert row["owner"] == "documented only", item_id


def test_the_kubernetes_table_lists_exactly_the_kubernetes_rules_of_each_item():
    rows, rules = _kubernetes_rows(), _kubernetes_rules()
    for item_id, row in rows.items():
        named = set(re.findall(r"AIS-[A-Z]\d-\d\d", row["rules"]))
        assert named == rules.get(item_id, set()), item_id
        if named:
            assert row["owner"] == "Kubernetes", f"{item_id}: judged on Kubernetes objects"


def test_the_cloud_s_items_name_a_cloud_component_that_exists():
    from aistack import aws, gcp

    exported = {f"aws.{n}" for n in aws.__all__} | {f"gcp.{n}" for n in gcp.__all__}
    for item_id, row in _kubernetes_rows().items():
        named = set(re.findall(r"`((?:aws|gcp)\.[A-Za-z]+)", row["what"]))
        assert named <= exported, f"{item_id}: {named - exported}"
        if row["owner"] == "the cloud":
            assert named, f"{item_id}: names no cloud component"


def test_kubernetes_components_named_exist():
    from aistack import k8s

    planned: set[str] = set()  # every planned Kubernetes component has landed
    exported = {f"k8s.{n}" for n in k8s.__all__}
    assert not planned & exported, "a planned component landed: update the table"
    for item_id, row in _kubernetes_rows().items():
        named = set(re.findall(r"`(k8s\.[A-Za-z]+)", row["what"]))
        assert named <= planned | exported, f"{item_id}: {named - exported - planned}"
        if row["owner"] == "Kubernetes":
            assert named & exported, f"{item_id}: names no Kubernetes component"


def test_what_aistack_check_calls_the_cloud_s_is_what_the_table_says():
    from aistack.policy.checklist import ON_THE_CLOUD

    owned = {item for item, row in _kubernetes_rows().items() if row["owner"] == "the cloud"}
    assert set(ON_THE_CLOUD) == owned
