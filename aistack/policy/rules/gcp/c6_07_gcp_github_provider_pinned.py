"""AIS-C6-07: GitHub workload identity providers admit one owner's one repository."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GITHUB_ISSUER, WIF_POOL_PROVIDER

_EQUALS = re.compile(r"^assertion\.(?P<claim>\w+)\s*==\s*(?P<q>['\"])(?P<value>[^'\"]*)(?P=q)$")
_SUBJECT = re.compile(r"^repo:(?P<owner>[^/:]+)/(?P<repo>[^/:]+):.+$")


def _scan(expression: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, depth) of each character outside string literals; a parenthesis
    has the depth of the expression around it."""
    depth, quote = 0, ""
    for index, char in enumerate(expression):
        if quote:
            quote = "" if char == quote else quote
            continue
        if char in "'\"":
            quote = char
            continue
        depth -= char == ")"
        yield index, char, depth
        depth += char == "("


def _top_level(expression: str, operator: str) -> list[str]:
    """`expression` split on `operator` outside parentheses and quotes."""
    parts, start = [], 0
    for index, _, depth in _scan(expression):
        if index >= start and depth == 0 and expression.startswith(operator, index):
            parts.append(expression[start:index].strip())
            start = index + len(operator)
    parts.append(expression[start:].strip())
    return parts


def _wrapped(term: str) -> bool:
    """True when the whole of `term` is one parenthesised expression."""
    if not (term.startswith("(") and term.endswith(")")):
        return False
    closes = [index for index, char, depth in _scan(term) if char == ")" and depth == 0]
    return closes == [len(term) - 1]


def _unwrap(term: str) -> str:
    term = term.strip()
    while _wrapped(term):
        term = term[1:-1].strip()
    return term


def pins(condition: str) -> tuple[set[str], set[str]]:
    """The owners and repositories every admitted token must have, from the condition's
    top-level conjuncts (a disjunction pins only what all its branches share)."""
    owners: set[str] = set()
    repositories: set[str] = set()
    for conjunct in _top_level(condition, "&&"):
        branches = [_unwrap(b) for b in _top_level(_unwrap(conjunct), "||")]
        branch_owners, branch_repos = [], []
        for branch in branches:
            match = _EQUALS.match(branch)
            if match is None or "*" in match["value"]:
                break
            claim, value = match["claim"], match["value"]
            if claim == "sub" and (subject := _SUBJECT.match(value)):
                branch_owners.append(subject["owner"])
                branch_repos.append(f"{subject['owner']}/{subject['repo']}")
            elif claim == "repository" and "/" in value:
                branch_owners.append(value.split("/", 1)[0])
                branch_repos.append(value)
            elif claim in ("repository_owner", "repository_owner_id"):
                branch_owners.append(value)
                branch_repos.append("")
            else:
                break
        else:
            if len(set(branch_owners)) == 1:
                owners.add(branch_owners[0])
            if len(set(branch_repos)) == 1 and branch_repos[0]:
                repositories.add(branch_repos[0])
    return owners, repositories


@rule(
    id="AIS-C6-07",
    checklist=["C6"],
    info="GitHub workload identity providers have an attribute condition pinning the owner "
    "and one repository.",
    why="token.actions.githubusercontent.com signs tokens for every repository on GitHub. "
    "Without a condition on the owner and repository, any workflow anywhere can exchange "
    "its token in your pool and act as every account bound to it.",
    fix="Use gcp.WorkloadIdentity github: {...}, or set attributeCondition to "
    "\"assertion.repository_owner == '<owner>' && assertion.repository == '<owner>/<repo>' "
    "&& assertion.sub == 'repo:<owner>/<repo>:ref:refs/heads/main'\".",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for provider in graph.of_type(WIF_POOL_PROVIDER):
        oidc = provider.inputs.get("oidc") or {}
        if oidc.get("issuerUri") != GITHUB_ISSUER:
            continue
        condition = str(provider.inputs.get("attributeCondition") or "").strip()
        if not condition:
            yield fail(provider, "no attribute condition: every GitHub repository is admitted.")
            continue
        owners, repositories = pins(condition)
        missing = [
            what
            for what, found in (("the owner", owners), ("one repository", repositories))
            if not found
        ]
        if missing:
            yield fail(provider, f"the condition does not pin {' and '.join(missing)}.")
        else:
            yield ok(provider, f"admits only {sorted(repositories)[0]}.")
