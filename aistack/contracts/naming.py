"""Cloud names that two deployments can share a project or account with.

A name the program fixes (a service account id, a group name, a log bucket id) is unique
in its project or account, and the project's other stacks pick theirs the same way: two
stacks of one program (`dev` beside `staging`), or two example stacks in one project, gave
the same id and the second `up` met a 409 or silently took the first one's object over
(../shared/research/gcp-fidelity-audit.md, defect 2). Every fixed name therefore ends in a
digest of the Pulumi project and stack: stable across `up`s of one stack, different for
every other stack. `aistack.engine.lifecycle` replays deployments to prove it.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["DIGEST_LENGTH", "stack_digest", "stack_scoped"]

#: Hex digits of the stack digest: 16.7 million values, for a handful of stacks a project.
DIGEST_LENGTH = 6


def stack_digest(project: str, stack: str) -> str:
    """A short digest of the Pulumi project and stack (`aistack-gcp/dev`)."""
    return hashlib.sha256(f"{project}/{stack}".encode()).hexdigest()[:DIGEST_LENGTH]


def stack_scoped(base: str, project: str, stack: str, *, limit: int, separator: str = "-") -> str:
    """`base` with the stack's digest appended, within `limit` characters: the base is cut
    (never the digest) and trailing separators dropped, so the result still ends the way
    the cloud's pattern wants (a letter or digit). A base that must be cut gets a digest of
    itself too, so two long names of one stack that share their head stay distinct."""
    suffix = f"{separator}{stack_digest(project, stack)}"
    if len(base) + len(suffix) > limit:
        suffix = f"{separator}{stack_digest(project, f'{stack}/{base}')}"
    head = base[: limit - len(suffix)]
    head = re.sub(f"[{re.escape(separator)}]+$", "", head)
    return f"{head}{suffix}"
