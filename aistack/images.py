"""Container images by digest (checklist E1): a tag can be moved, a digest cannot.

Wherever aistack takes an image it runs `require_digest`, so `:latest` or `:2.3` is refused
with the command that finds the digest.
"""

from __future__ import annotations

import re

from aistack.errors import ConfigError

__all__ = ["DIGEST_PATTERN", "image_by_digest", "is_pinned", "require_digest"]

DIGEST_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._\-/:]*@sha256:[0-9a-f]{64}$")


def image_by_digest(repository: str, digest: str) -> str:
    """`repo@sha256:...` from a repository URL and a digest (with or without `sha256:`)."""
    digest = digest if digest.startswith("sha256:") else f"sha256:{digest}"
    reference = f"{repository.split('@', 1)[0]}@{digest}"
    if not DIGEST_PATTERN.match(reference):
        raise ConfigError(
            f"{reference!r} is not an image reference by sha256 digest.",
            field="image",
            fix="pass the 64-hex-digit digest that `docker push` or "
            "`aws ecr describe-images` prints.",
        )
    return reference


def is_pinned(reference: str) -> bool:
    return bool(DIGEST_PATTERN.match(reference))


def require_digest(reference: str, field: str) -> str:
    """`reference` if pinned by digest, else a ConfigError naming `field`."""
    if is_pinned(reference):
        return reference
    tag = reference.rsplit(":", 1)[-1] if ":" in reference.rsplit("/", 1)[-1] else "latest"
    raise ConfigError(
        f"image {reference!r} is referenced by the mutable tag {tag!r}; a tag can be moved "
        "to another build (checklist E1).",
        field=field,
        fix="reference it by digest, e.g. 'repo@sha256:<64 hex>' (find it with "
        "`aws ecr describe-images --repository-name <repo> --image-ids imageTag=<tag>` or "
        "`docker buildx imagetools inspect <image>`).",
    )
