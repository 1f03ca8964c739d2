"""AIS-G2-01: serving declares what it logs, and full logging says what the logs hold.

Whether prompts and answers end up in logs decides whether the logs hold personal data, who
may read them and how long they may be kept. Serving launch templates carry
`aistack:request-logging` (none, metadata or full); with full, also
`aistack:log-data-classification` and `aistack:log-retention-days`.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.aws import LOG_CLASSIFICATION_TAG, LOG_RETENTION_TAG, REQUEST_LOGGING_TAG
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_serving import serving_templates

MODES = ("none", "metadata", "full")


@rule(
    id="AIS-G2-01",
    checklist=["G2"],
    info=f"Serving declares {REQUEST_LOGGING_TAG} (none, metadata, full); full also declares "
    "the logs' classification and retention.",
    why="Logged prompts are often personal data: logging them must be a decision, with a "
    "classification that sets who may read them and a retention that bounds how long.",
    fix="Set request_logging on aws.InferenceTier (and, for 'full', log_data_classification "
    "and log_retention_days), or tag your serving templates the same way.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        found = tags(template)
        mode = found.get(REQUEST_LOGGING_TAG)
        if mode not in MODES:
            yield fail(template, f"no valid {REQUEST_LOGGING_TAG} tag (got {mode!r}).")
            continue
        if mode == "full":
            missing = [t for t in (LOG_CLASSIFICATION_TAG, LOG_RETENTION_TAG) if not found.get(t)]
            if missing:
                yield fail(
                    template, "logs request bodies but does not declare " + ", ".join(missing) + "."
                )
                continue
            yield ok(
                template,
                f"logs request bodies, classified {found[LOG_CLASSIFICATION_TAG]}, kept "
                f"{found[LOG_RETENTION_TAG]} days.",
            )
        else:
            yield ok(template, f"request logging: {mode}.")
