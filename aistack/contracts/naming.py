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

__all__ = ["DIGEST_LENGTH", "is_stack_scoped", "stack_digest", "stack_scoped"]

#: Hex digits of the stack digest: 16.7 million values, for a handful of stacks a project.
DIGEST_LENGTH = 6


def stack_digest(project: str, stack: str) -> str:
    """A short digest of the Pulumi project and stack (`aistack-gcp/dev`)."""
    return hashlib.sha256(f"{project}/{stack}".encode()).hexdigest()[:DIGEST_LENGTH]


def stack_scoped(base: str, project: str, stack: str, *, limit: int, separator: str = "-") -> str:
    """`base` ending in the stack's digest, within `limit` characters: the base is cut
    (never the digest) and trailing separators dropped, so the result still ends the way
    the cloud's pattern wants (a letter or digit). A base that must be cut keeps four hex
    digits of itself before the digest, so two long names of one stack that share their
    head stay distinct, and every scoped name still ends in the stack's digest."""
    suffix = f"{separator}{stack_digest(project, stack)}"
    if len(base) + len(suffix) > limit:
        suffix = f"{separator}{hashlib.sha256(base.encode()).hexdigest()[:4]}{suffix}"
    head = base[: limit - len(suffix)]
    head = re.sub(f"[{re.escape(separator)}]+$", "", head)
    return f"{head}{suffix}"


def is_stack_scoped(name: str, project: str, stack: str) -> bool:
    """Whether `name` carries the stack's digest as one of its parts (`stack_scoped` ends
    a name with it; a pool id keeps its own suffix after it)."""
    digest = stack_digest(project, stack)
    return re.search(rf"(^|[-_./]){digest}([-_./]|$)", name) is not None
