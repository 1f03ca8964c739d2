"""The node's packaged files (`scripts/`): read as each cloud's nodes get them, and packed
into the archive the boot script unpacks.

One set of scripts serves both clouds (`AISTACK_CLOUD`). The GCP code sits between
`# [gcp]` and `# [/gcp]` lines, which AWS nodes do not get: an AWS node gets exactly the
scripts it got before GCP support. EC2 user data is limited to 16 KB, so the scripts travel
as a deterministic gzip'd tar with their comments removed; the same scripts always give the
same bytes, so a preview shows no spurious change.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Mapping
from importlib import resources
from typing import Literal

from aistack.errors import AistackError

__all__ = ["FILES", "SCRIPTS", "script"]

#: The shell scripts, in the order bootstrap.sh uses them (lib.sh is sourced by all).
SCRIPTS: tuple[str, ...] = (
    "lib.sh",
    "bootstrap.sh",
    "wallclock-limit.sh",
    "spot-watch.sh",
    "idle-watchdog.sh",
    "nvme-cache.sh",
    "dataset-sync.sh",
)
#: Every packaged file: the scripts and the CloudWatch agent config template.
FILES: tuple[str, ...] = (*SCRIPTS, "cloudwatch-agent.json")


def script(name: str, cloud: Literal["aws", "gcp"] | None = "aws") -> str:
    """The text of a packaged node file (one of `FILES`), with its documentation comments,
    as `cloud`'s nodes get it: for "aws" without the `# [gcp]` blocks; "gcp" and None give
    the source, which runs on both (the blocks check AISTACK_CLOUD)."""
    if name not in FILES:
        raise AistackError(f"no node script named {name!r}; the packaged ones are {list(FILES)}")
    text = resources.files("aistack.node").joinpath("scripts", name).read_text(encoding="utf-8")
    return _without_gcp(text) if cloud == "aws" else text


def _without_gcp(text: str) -> str:
    """`text` without its lines from each `# [gcp]` line to the next `# [/gcp]` line."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        marker = line.strip()
        if marker == "# [gcp]":
            if inside:
                raise AistackError("a '# [gcp]' block opens inside another")
            inside = True
        elif marker == "# [/gcp]":
            if not inside:
                raise AistackError("a '# [/gcp]' line closes no block")
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise AistackError("a '# [gcp]' block is never closed")
    return "".join(kept)


def _strip_comments(text: str) -> str:
    """`text` without comment-only and blank lines; the shebang stays.

    Safe for these scripts because none has a heredoc or multi-line string whose lines
    begin with '#' or must stay blank (tests run the stripped copies end to end).
    """
    lines = text.splitlines()
    kept = [lines[0]] if lines and lines[0].startswith("#!") else []
    kept += [
        line for line in lines[len(kept) :] if line.strip() and not line.lstrip().startswith("#")
    ]
    return "\n".join(kept) + "\n"


def _scripts_archive(
    cloud: Literal["aws", "gcp"] = "aws", extra: Mapping[str, str] | None = None
) -> bytes:
    """`cloud`'s node files (and `extra` ones, by name) as a gzip'd tar, byte-identical for
    identical scripts. GCP nodes have no use for the CloudWatch agent template."""
    names = [n for n in FILES if cloud == "aws" or n != "cloudwatch-agent.json"]
    files = {name: script(name, cloud) for name in names} | dict(extra or {})
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, text in files.items():
            data = (_strip_comments(text) if name.endswith(".sh") else text).encode("ascii")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") and name != "lib.sh" else 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)
