"""aistack: Pulumi components for an AI team's infrastructure on AWS, Google Cloud and
Kubernetes, with an offline engine to preview, check and cost the stacks built from them.

`__version__` is the installed distribution's version, whose one source is `version` in
pyproject.toml (semantic versioning: CHANGELOG.md says what counts as a breaking change).
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["__version__"]

try:
    __version__ = metadata.version("aistack")
except metadata.PackageNotFoundError:  # a source tree on sys.path without an install
    __version__ = "0+unknown"
