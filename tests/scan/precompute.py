"""`python -m tests.scan.precompute <dir>`: the session's shared scans (conftest._compute),
started in the background when the test session starts (tests/conftest.py), so no xdist
worker sits idle the ~20 s they take while another computes them.

It holds the same lock the `stack_scans` fixture takes and writes the same cache file: a
worker that needs the scans before they are done waits for them; if this process fails,
it leaves no cache and the first worker computes them itself.
"""

import fcntl
import json
import sys
from pathlib import Path

CACHE = "aistack-scan.json"
LOCK = "aistack-scan.lock"


def main(shared: Path) -> None:
    with open(shared / LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cache = shared / CACHE
        if cache.exists():
            return
        from tests.scan.conftest import _compute

        cache.write_text(json.dumps(_compute()))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
