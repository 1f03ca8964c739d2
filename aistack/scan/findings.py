"""What the validators report, and the skip list that triages it.

The skip list is data in the repository (`aistack/scan/skips.yaml`): each entry names a
check, the resources it covers (shell patterns on the Pulumi logical name), optionally a
pattern on the finding's title, and the reason.
`skips:` are settled (false positive, deliberate, accepted); `pending:` are real findings
whose fix is on its way, each with the audit's defect number, so the scan stays green
while the fix lands and the entry is deleted after it. Every pattern of every entry must
still match a finding, so a fixed defect or a renamed resource shows up as a stale entry.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aistack.errors import Problems

__all__ = ["DEFAULT_SKIPS", "Finding", "SkipEntry", "SkipList", "Triage"]

DEFAULT_SKIPS = Path(__file__).with_name("skips.yaml")


@dataclass(frozen=True)
class Finding:
    """One failed check on one resource."""

    tool: Literal["checkov", "iam", "schema"]
    check_id: str
    #: The Pulumi logical name of the resource.
    resource: str
    #: Where the tool saw it: a Terraform address or Kubernetes object id (checkov),
    #: `name: input path` (iam), or `Kind namespace/name` (schema).
    location: str
    title: str
    guideline: str = ""

    def as_dict(self) -> dict[str, str]:
        return {
            "tool": self.tool,
            "check_id": self.check_id,
            "resource": self.resource,
            "location": self.location,
            "title": self.title,
            "guideline": self.guideline,
        }


@dataclass(frozen=True)
class SkipEntry:
    check: str
    resources: tuple[str, ...]
    reason: str
    pending: bool = False
    defect: str = ""
    #: A shell pattern the finding's title must match too (narrows an IAM entry to the
    #: one condition key it is about, so a new problem on the same resource still fails).
    title: str = "*"

    def matches(self, finding: Finding) -> bool:
        return (
            finding.check_id == self.check
            and fnmatch.fnmatchcase(finding.title, self.title)
            and any(fnmatch.fnmatchcase(finding.resource, pattern) for pattern in self.resources)
        )

    def label(self) -> str:
        kind = f"pending (defect {self.defect})" if self.pending else "skip"
        return f"{kind} {self.check} [{', '.join(self.resources)}]"


@dataclass
class Triage:
    """Findings split by what the skip list says about them."""

    failed: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Finding, SkipEntry]] = field(default_factory=list)
    pending: list[tuple[Finding, SkipEntry]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        def with_entry(pairs: list[tuple[Finding, SkipEntry]]) -> list[dict[str, str]]:
            return [
                {**f.as_dict(), "reason": e.reason, **({"defect": e.defect} if e.pending else {})}
                for f, e in pairs
            ]

        return {
            "failed": [f.as_dict() for f in self.failed],
            "pending": with_entry(self.pending),
            "skipped": with_entry(self.skipped),
        }


@dataclass(frozen=True)
class SkipList:
    entries: tuple[SkipEntry, ...]

    @classmethod
    def load(cls, path: Path | str = DEFAULT_SKIPS) -> SkipList:
        import yaml

        document = yaml.safe_load(Path(path).read_text()) or {}
        return cls.from_dict(document, source=str(path))

    @classmethod
    def from_dict(cls, document: dict[str, Any], *, source: str = "skips") -> SkipList:
        """Entries from `{"skips": [...], "pending": [...]}`; every one needs a reason
        (and a pending one its defect), or a ConfigError names the entry."""
        problems = Problems()
        entries: list[SkipEntry] = []
        for section in ("skips", "pending"):
            for index, raw in enumerate(document.get(section) or []):
                where = f"{source}:{section}[{index}]"
                raw = raw if isinstance(raw, dict) else {}
                check = str(raw.get("check") or "").strip()
                reason = str(raw.get("reason") or "").strip()
                resources = raw.get("resources", ["*"])
                if isinstance(resources, str):
                    resources = [resources]
                defect = str(raw.get("defect") or "").strip()
                if not check:
                    problems.add(f"{where}.check", "missing", "name the check id (CKV_AWS_...).")
                if not reason:
                    problems.add(
                        f"{where}.reason",
                        f"the entry for {check or '?'} has no reason",
                        "say why the finding is a false positive, deliberate or accepted.",
                    )
                if section == "pending" and not defect:
                    problems.add(
                        f"{where}.defect",
                        f"the pending entry for {check or '?'} names no defect",
                        "give the audit's defect number the fix belongs to.",
                    )
                entries.append(
                    SkipEntry(
                        check=check,
                        resources=tuple(str(p) for p in resources),
                        reason=reason,
                        pending=section == "pending",
                        defect=defect,
                        title=str(raw.get("title") or "*"),
                    )
                )
        problems.raise_if_any()
        return cls(tuple(entries))

    def triage(self, findings: Iterable[Finding]) -> Triage:
        result = Triage()
        for finding in findings:
            entry = next((e for e in self.entries if e.matches(finding)), None)
            if entry is None:
                result.failed.append(finding)
            elif entry.pending:
                result.pending.append((finding, entry))
            else:
                result.skipped.append((finding, entry))
        return result

    def stale(self, findings: Iterable[Finding]) -> list[str]:
        """Entry patterns that match no finding: a fixed defect or a renamed resource."""
        findings = list(findings)
        unmatched: list[str] = []
        for entry in self.entries:
            for pattern in entry.resources:
                single = SkipEntry(entry.check, (pattern,), entry.reason, title=entry.title)
                if not any(single.matches(finding) for finding in findings):
                    unmatched.append(f"{entry.label()}: {pattern!r} matches nothing")
        return unmatched
