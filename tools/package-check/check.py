"""The package as a team installs it: the wheel built from this tree, in a clean virtual
environment with one cloud's extra only (`aistack[gcp]`), previews `stacks/gcp`.

Checked, not assumed: pulumi-aws and pulumi-kubernetes are not installed there; the
preview succeeds and imports neither; a component of a missing cloud fails with one line
naming its extra; `aistack --version` is the pyproject's version. It prints the time to the
preview's first output. Run by `make package-check` (and `make test`); every temporary
file is under one directory removed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv") or "uv"
#: Bounds for each step (a cold cache downloads pulumi and pulumi-gcp).
STEP_SECONDS = 600

PROBE = r"""
import importlib.util, sys
from typer.testing import CliRunner
from aistack.cli import app
for sdk in ("pulumi_aws", "pulumi_kubernetes"):
    assert importlib.util.find_spec(sdk) is None, f"{sdk} is installed with aistack[gcp] only"
result = CliRunner().invoke(app, ["preview", sys.argv[1]])
assert result.exit_code == 0, result.output
loaded = sorted(m for m in sys.modules if m.startswith(("pulumi_aws", "pulumi_kubernetes")))
assert not loaded, loaded
from aistack import aws
try:
    aws.DatasetBucket
except ModuleNotFoundError as error:
    message = str(error)
    assert "aistack[aws]" in message and "\n" not in message, message
else:
    raise AssertionError("aws.DatasetBucket resolved without pulumi-aws")
print("ok")
"""


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_SECONDS
    )
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def main() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with tempfile.TemporaryDirectory(prefix="aistack-package-") as scratch:
        work = Path(scratch)
        run(UV, "build", "--wheel", "--out-dir", str(work / "dist"), cwd=ROOT)
        (wheel,) = (work / "dist").glob("aistack-*.whl")
        venv = work / "venv"
        run(UV, "venv", "--quiet", "--python", sys.executable, str(venv))
        python = venv / "bin" / "python"
        run(UV, "pip", "install", "--quiet", "--python", str(python), f"{wheel}[gcp]")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        shown = run(str(venv / "bin" / "aistack"), "--version", env=env).strip()
        if shown != f"aistack {version}":
            sys.exit(f"aistack --version says {shown!r}, pyproject.toml {version}")
        # A copy of the example, outside the source tree, so nothing resolves from it.
        stack = work / "gcp"
        shutil.copytree(
            ROOT / "stacks/gcp", stack, ignore=shutil.ignore_patterns("tests", "__pycache__")
        )
        started = time.monotonic()
        first = subprocess.run(
            [str(venv / "bin" / "aistack"), "preview", str(stack)],
            env=env, capture_output=True, text=True, timeout=STEP_SECONDS, cwd=work,
        )  # fmt: skip
        seconds = time.monotonic() - started
        if first.returncode != 0:
            sys.exit(f"aistack preview of stacks/gcp failed:\n{first.stdout}\n{first.stderr}")
        out = run(str(python), "-c", PROBE, str(stack), env=env, cwd=work)
        if out.strip() != "ok":
            sys.exit(out)
        print(
            f"package check: {wheel.name}[gcp] previews stacks/gcp without pulumi-aws or "
            f"pulumi-kubernetes; first preview {seconds:.1f} s"
        )


if __name__ == "__main__":
    main()
