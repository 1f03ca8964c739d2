"""Run checkov over several directories in one process:
`python checkov_batch.py LIST_ARGS OUT DIR...`.

Run by checkov's own interpreter (aistack.scan.checkov.run_checkov_many), never imported by
aistack: checkov lives in its own environment. Importing checkov takes about 5 s of its
6 s per scan; a batch pays it once. Each directory gets a fresh `Checkov` with fresh runners for the
two frameworks aistack uses; its JSON report is written to `OUT/<n>.json`, the
exit code to `OUT/<n>.rc`, its time to `OUT/<n>.seconds`; `checkov <LIST_ARGS>` (comma
separated, the check list) prints to `OUT/list.txt`. Results equal one
`checkov -d DIR` per directory (tests/scan/test_checkov_batch.py). `scan` is one such
scan, which the test suite's checkov service (tests/_harness/checkov_service.py) also runs.
"""

import contextlib
import io
import sys
import time
from pathlib import Path

#: aistack.scan.checkov.REPORT_ARGUMENTS, which this script, run by checkov's interpreter,
#: cannot import (a test holds them equal).
REPORT_ARGUMENTS = ("--skip-download", "--compact", "-o", "json")


def import_checkov() -> None:
    """Import what a scan runs, then move everything alive to the collector's permanent
    generation (`gc.freeze`): checkov's modules and check registries, about 320,000
    objects that live as long as the process, which every full collection would otherwise
    walk again: 1.3 s of the 7.3 s of CPU a batch of the nine example stacks took. A
    scan's own garbage is collected as usual."""
    import gc

    import checkov.kubernetes.runner  # noqa: F401
    import checkov.main  # noqa: F401
    import checkov.terraform.plan_runner  # noqa: F401

    gc.freeze()


def main(list_arguments: str, out: str, directories: list[str]) -> None:
    import_checkov()
    for index, directory in enumerate(directories):
        started = time.monotonic()
        code, report = scan(
            [
                "-d",
                directory,
                "--framework",
                *(Path(directory) / "frameworks").read_text().split(),
                *REPORT_ARGUMENTS,
            ]
        )
        (Path(out) / f"{index}.json").write_text(report)
        (Path(out) / f"{index}.rc").write_text(str(code))
        (Path(out) / f"{index}.seconds").write_text(f"{time.monotonic() - started:.3f}")

    listing = io.StringIO()
    from checkov.main import Checkov

    with contextlib.redirect_stdout(listing), contextlib.suppress(SystemExit):
        Checkov(argv=list_arguments.split(",")).run()
    (Path(out) / "list.txt").write_text(listing.getvalue())


def scan(argv: list[str]) -> tuple[int, str]:
    """`checkov ARGV` in this process: its exit code and what it printed."""
    from checkov.kubernetes.runner import Runner as KubernetesRunner
    from checkov.main import Checkov
    from checkov.terraform.plan_runner import Runner as PlanRunner

    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        try:
            checkov = Checkov(argv=argv)
            # checkov's runners are module-level instances, and these two keep the
            # definitions and graph of their first run (`if self.definitions is None`
            # in their run()): each scan needs its own.
            checkov.runners = [
                type(runner)() if isinstance(runner, (PlanRunner, KubernetesRunner)) else runner
                for runner in checkov.runners
            ]
            code = checkov.run()
        except SystemExit as exit_:
            code = exit_.code
    # SystemExit's code: None (success), the exit code, or a message (exit code 1).
    return (0 if code is None else code if isinstance(code, int) else 1), report.getvalue()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
