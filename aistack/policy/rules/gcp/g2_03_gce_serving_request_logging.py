"""AIS-G2-03: serving VMs record their request-logging choice, classification with 'full'."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import serving_templates

_CHOICES = ("none", "metadata", "full")


@rule(
    id="AIS-G2-03",
    checklist=["G2"],
    info="Serving templates label an explicit request-logging choice; 'full' also the "
    "logs' data classification.",
    why="Prompts are user data. Whether they are logged, and what the logs then hold, is "
    "a decision someone must make and others must be able to read from the stack.",
    fix="Set gcp.InferenceTier requestLogging (and with 'full' logDataClassification and "
    "logRetentionDays).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        labels = template.inputs.get("labels") or {}
        choice = labels.get("aistack-request-logging")
        if choice not in _CHOICES:
            yield fail(template, "no explicit request-logging choice.")
        elif choice == "full" and not labels.get("aistack-log-data-classification"):
            yield fail(template, "logs prompts without saying what they hold.")
        else:
            yield ok(template, f"request logging {choice}.")
