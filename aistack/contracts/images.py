"""Container images by digest (checklist E1): a tag can be moved, a digest cannot.

Wherever aistack takes an image it runs `require_digest`, so `:latest` or `:2.3` is refused
with the command that finds the digest. The accepted form follows the OCI/Docker reference
grammar (`[host[:port]/]path[:tag]@sha256:<64 lowercase hex>`). A tag next to the digest
(`repo:2.3.1@sha256:...`) is accepted: Docker, containerd, ECS, Batch and Kubernetes pull by
the digest and ignore the tag, which then only documents which release the digest was.
"""

from __future__ import annotations

import re
from typing import Any

from aistack.errors import ConfigError

__all__ = [
    "DIGEST_PATTERN",
    "check_tag_prefixes",
    "image_by_digest",
    "is_pinned",
    "normalize_digest",
    "pinned_image",
    "reference_problem",
    "require_digest",
]

# The grammar of github.com/distribution/reference: a host needs a dot or port or is
# `localhost` to be told apart from a path component, paths are lowercase, tags are
# at most 128 word characters, dots and dashes.
_HOST_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"{_HOST_PART}(?:\.{_HOST_PART})*(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = rf"(?:{_HOST}/)?{_PATH_PART}(?:/{_PATH_PART})*"
_TAG = r"[\w][\w.-]{0,127}"
_SHA256 = r"sha256:[0-9a-f]{64}"

#: A complete image reference pinned by sha256 digest, optionally with a tag before it.
DIGEST_PATTERN = re.compile(rf"^(?P<name>{_NAME})(?::(?P<tag>{_TAG}))?@(?P<digest>{_SHA256})$")
_UNPINNED = re.compile(rf"^(?P<name>{_NAME})(?::(?P<tag>{_TAG}))?$")
_DIGEST = re.compile(rf"^{_SHA256}$")
_MAX_NAME = 255  # The registry API refuses longer repository names, host included.

_FIND_DIGEST = (
    "reference it by digest, e.g. 'repo@sha256:<64 hex>' (find it with "
    "`aws ecr describe-images --repository-name <repo> --image-ids imageTag=<tag>` or "
    "`docker buildx imagetools inspect <image>`)."
)


def normalize_digest(digest: str, field: str = "digest") -> str:
    """`sha256:<64 hex>` from a digest given with or without its `sha256:` prefix."""
    text = digest.strip() if isinstance(digest, str) else ""
    text = text if text.startswith("sha256:") else f"sha256:{text}"
    if _DIGEST.match(text):
        return text
    hint = " (hex digits must be lowercase)" if _DIGEST.match(text.lower()) else ""
    raise ConfigError(
        f"{digest!r} is not a sha256 image digest{hint}.",
        field=field,
        fix="pass the 'sha256:' followed by 64 lowercase hex digits that `docker push` or "
        "`aws ecr describe-images` prints.",
    )


def pinned_image(reference: str, field: str) -> str:
    """`require_digest` for a pydantic validator: the reference, or a ValueError with the
    problem and its fix, which the Args turn into one ConfigError naming `field`."""
    try:
        return require_digest(reference, field)
    except ConfigError as error:
        problem = error.problems[0]
        raise ValueError(f"{problem.message} Fix: {problem.fix}") from None


def image_by_digest(repository: str, digest: str, *, field: str = "image") -> str:
    """`repo@sha256:...` from a repository URL and a digest (with or without `sha256:`).

    Anything after an `@` in `repository` is replaced; a tag is kept (see module docs).
    """
    reference = f"{repository.split('@', 1)[0]}@{normalize_digest(digest, field)}"
    return require_digest(reference, field)


def is_pinned(reference: Any) -> bool:
    """True when `reference` is a valid image reference carrying a sha256 digest."""
    return reference_problem(reference) is None


def reference_problem(reference: Any) -> str | None:
    """Why `reference` is not an image pinned by digest, or None when it is."""
    if not isinstance(reference, str) or not reference.strip():
        return "no image reference is given"
    if reference != reference.strip():
        return f"image {reference!r} has surrounding whitespace"
    match = DIGEST_PATTERN.match(reference)
    if match:
        if len(match["name"]) > _MAX_NAME:
            return f"image name in {reference!r} is longer than {_MAX_NAME} characters"
        return None
    if "@" in reference:
        name, digest = reference.rsplit("@", 1)
        if not _UNPINNED.match(name):
            return (
                f"{name!r} in {reference!r} is not a valid image name (paths are lowercase "
                "letters, digits and . _ - separators)"
            )
        if digest.lower() != digest and _DIGEST.match(digest.lower()):
            return f"digest {digest!r} has uppercase hex digits; digests are lowercase"
        return f"digest {digest!r} in {reference!r} is not 'sha256:' followed by 64 hex digits"
    unpinned = _UNPINNED.match(reference)
    if unpinned is None:
        return f"{reference!r} is not a valid image reference"
    if unpinned["tag"] is None:
        return (
            f"image {reference!r} has neither tag nor digest, so it means the mutable tag 'latest'"
        )
    return (
        f"image {reference!r} is referenced by the mutable tag {unpinned['tag']!r}; a tag "
        "can be moved to another build"
    )


def require_digest(reference: str, field: str) -> str:
    """`reference` if pinned by digest, else a ConfigError naming `field`."""
    problem = reference_problem(reference)
    if problem is None:
        return reference
    raise ConfigError(f"{problem} (checklist E1).", field=field, fix=_FIND_DIGEST)


_TAG_PREFIX = re.compile(r"^[\w][\w.-]{0,127}$")


def check_tag_prefixes(prefixes: tuple[str, ...]) -> tuple[str, ...]:
    """`prefixes` if each can start an image tag (the reference grammar above: a word
    character, then word characters, dots and dashes, 128 at most) and none repeats; a
    ValueError saying the fix otherwise. Registries' release-tag lifecycle rules use it."""
    bad = [p for p in prefixes if not _TAG_PREFIX.match(p)]
    if bad:
        raise ValueError(
            f"{bad} cannot start an image tag. Fix: use letters, digits, '_', '.' or '-' "
            "(not starting with '.' or '-'), at most 128 characters, e.g. 'v'."
        )
    if len(set(prefixes)) != len(prefixes):
        raise ValueError("a prefix is listed twice. Fix: list each prefix once.")
    return prefixes
