"""AIS-S7-01: every serving node names the explicit model version it serves.

'latest' is not a version: two nodes started an hour apart can serve different models under
it, and nobody can say which answered. Serving launch templates carry
`aistack:model-version` (aws.InferenceTier sets it from each version); it must be present
and not a moving label.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.aws import MODEL_VERSION_TAG
from aistack.contracts.model_versions import MOVING_LABELS
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_serving import serving_templates


@rule(
    id="AIS-S7-01",
    checklist=["S7"],
    info=f"Serving launch templates carry an explicit {MODEL_VERSION_TAG} (not latest).",
    why="A moving label makes it impossible to say which model produced an answer, or to "
    "roll back to the one before.",
    fix="List explicit versions in aws.InferenceTier (e.g. '1.4.0'), or tag your serving "
    f"templates {MODEL_VERSION_TAG}=<the immutable version>.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        version = tags(template).get(MODEL_VERSION_TAG, "").strip()
        if not version:
            yield fail(template, f"serving template has no {MODEL_VERSION_TAG} tag.")
        elif version.lower() in MOVING_LABELS:
            yield fail(template, f"model version {version!r} is a moving label, not a version.")
        else:
            yield ok(template, f"serves model version {version}.")
