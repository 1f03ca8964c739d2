"""AIS-C5-08: Vertex AI Workbench notebooks stop themselves when idle, within 4 hours."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import WORKBENCH_INSTANCE, workbench_metadata

#: Workbench accepts 10 to 1440 minutes (Vertex AI Workbench docs, "Idle shutdown").
MIN_SECONDS, MAX_SECONDS = 10 * 60, 1440 * 60
#: The checklist's ceiling, the same as AWS Studio's (AIS-C5-01): a long meeting or lunch,
#: not a night. Past that, an idle notebook is a forgotten one.
CEILING_SECONDS = 240 * 60


@rule(
    id="AIS-C5-08",
    checklist=["C5"],
    info="Workbench instances set idle-timeout-seconds within Workbench's 10 min - 24 h "
    "and at most 4 h, with guest attributes on.",
    why="A notebook VM bills every hour it runs, used or not, GPUs included. Workbench stops "
    "an idle instance only after idle-timeout-seconds (180 min when unset, and only with "
    "guest attributes on: Workbench docs, 'Idle shutdown' requirements); a value outside "
    "10-1440 minutes is not one Workbench offers.",
    fix="Use gcp.Notebook (idleMinutes, default 60), or set gce_setup.metadata "
    "{'idle-timeout-seconds': '3600'} and leave enable-guest-attributes true.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for notebook in graph.of_type(WORKBENCH_INSTANCE):
        metadata = workbench_metadata(notebook)
        raw = metadata.get("idle-timeout-seconds")
        if metadata.get("enable-guest-attributes", "true").lower() == "false":
            yield fail(notebook, "guest attributes are off: idle shutdown cannot run.")
        elif raw is None:
            yield fail(
                notebook,
                "no idle-timeout-seconds: the stack does not state when it stops; it relies "
                "on Workbench's current default (180 idle minutes).",
            )
        elif not raw.isdigit():
            yield fail(notebook, f"idle-timeout-seconds {raw!r} is not a number of seconds.")
        elif not MIN_SECONDS <= int(raw) <= MAX_SECONDS:
            yield fail(
                notebook,
                f"idle-timeout-seconds {raw} is outside Workbench's 600-86400 s (10 min-24 h).",
            )
        elif int(raw) > CEILING_SECONDS:
            yield fail(notebook, f"stops after {int(raw) // 60} idle minutes, more than 240.")
        else:
            yield ok(notebook, f"stops after {int(raw) // 60} idle minutes.")
