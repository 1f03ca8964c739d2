"""AIS-C6-04: roles trusted by GitHub Actions pin the audience and a non-wildcard subject."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list
from aistack.queries.aws_iam import statements

ROLE = "aws:iam/role:Role"
ISSUER = "token.actions.githubusercontent.com"
#: Operators that require the key to be present and match; "...IfExists", negations and
#: ForAllValues (true for a missing key) would let an unpinned token through.
_PINNING = {"stringequals", "stringlike", "foranyvalue:stringequals", "foranyvalue:stringlike"}
_SUBJECT = re.compile(r"^repo:(?P<owner>[^/:]+)/(?P<repo>[^/:]+):(?P<rest>.+)$")


def _is_github(principal: object) -> bool:
    if not isinstance(principal, dict):
        return False
    return any(
        str(federated) == ISSUER or str(federated).endswith(f":oidc-provider/{ISSUER}")
        for federated in as_list(principal.get("Federated"))
    )


def _wildcard(text: str) -> bool:
    return "*" in text or "?" in text


def subject_problem(subject: str) -> str | None:
    """Why a `sub` value admits more than one repository's chosen refs; None if it does not."""
    match = _SUBJECT.match(subject)
    if not match:
        return f"sub {subject!r} does not name one repository"
    if _wildcard(match.group("owner")) or _wildcard(match.group("repo")):
        return f"sub {subject!r} matches any repository"
    parts = re.split(r"[:/]", match.group("rest"))
    if any(part.startswith("*") or part == "?" for part in parts):
        return f"sub {subject!r} matches any branch, environment or event"
    return None


def trust_problems(statement: dict) -> list[str]:
    audiences: list[str] = []
    subjects: list[str] = []
    for operator, pairs in (statement.get("Condition") or {}).items():
        if str(operator).lower() not in _PINNING or not isinstance(pairs, dict):
            continue
        for key, values in pairs.items():
            claim = str(key).lower()
            if claim == f"{ISSUER}:aud":
                audiences += [str(v) for v in as_list(values)]
            elif claim == f"{ISSUER}:sub":
                subjects += [str(v) for v in as_list(values)]
    problems = []
    if not audiences:
        problems.append("the audience (aud) is not pinned")
    elif any(_wildcard(a) for a in audiences):
        problems.append("the audience (aud) is a wildcard")
    if not subjects:
        problems.append("the subject (sub) is not pinned: any GitHub repository could assume it")
    problems += [p for p in map(subject_problem, subjects) if p]
    return problems


@rule(
    id="AIS-C6-04",
    checklist=["C6"],
    info="GitHub Actions OIDC trust pins aud and a sub naming one repository's refs.",
    why="The GitHub OIDC provider vouches for every workflow on GitHub; without a pinned "
    "subject any repository, or any branch of yours, can assume the deploy role.",
    fix="Pin token.actions.githubusercontent.com:aud to sts.amazonaws.com and :sub to "
    "'repo:<owner>/<repo>:ref:refs/heads/<branch>' or ':environment:<env>' (aws."
    "WorkloadIdentity github: {...} does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for role in graph.of_type(ROLE):
        trusted = [
            s
            for s in statements(role.inputs.get("assumeRolePolicy")) or []
            if s.get("Effect") == "Allow" and _is_github(s.get("Principal"))
        ]
        if not trusted:
            continue
        problems = [p for statement in trusted for p in trust_problems(statement)]
        if problems:
            yield fail(role, "GitHub Actions trust: " + "; ".join(problems) + ".")
        else:
            yield ok(role, "GitHub Actions trust pins the audience and the repository's refs.")
