"""Shared test setup: nothing here may touch a real cloud."""

import os

import pytest

# Any AWS SDK call a test forgets to mock must fail rather than reach an account.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


@pytest.hookimpl(trylast=True)  # after the tmp_path plugin has made the session's basetemp
def pytest_configure(config):
    """Start the shared scans (tests/scan/precompute.py) in the background when this session
    will run them: in the controller only (xdist workers have `workerinput`)."""
    if hasattr(config, "workerinput") or not _runs_scans(config):
        return
    import subprocess
    import sys
    from pathlib import Path

    shared = config._tmp_path_factory.getbasetemp()
    root = Path(__file__).resolve().parents[1]
    config._aistack_precompute = subprocess.Popen(
        [sys.executable, "-m", "tests.scan.precompute", str(shared)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def pytest_unconfigure(config):
    process = getattr(config, "_aistack_precompute", None)
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait(timeout=30)


def _runs_scans(config) -> bool:
    """Whether the paths given (or the testpaths) include tests/scan."""
    from pathlib import Path

    scans = Path(__file__).resolve().parent / "scan"
    args = [a.split("::")[0] for a in config.args] or ["."]
    for arg in args:
        path = (Path(config.invocation_params.dir) / arg).resolve()
        if path == scans or scans.is_relative_to(path) or path.is_relative_to(scans):
            return True
    return False
