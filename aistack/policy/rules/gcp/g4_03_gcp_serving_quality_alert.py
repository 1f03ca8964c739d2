"""AIS-G4-03: every serving tier alerts on its model-quality metric."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import QUALITY_METRIC_PREFIX, alert_filters, serving_templates


@rule(
    id="AIS-G4-03",
    checklist=["G4"],
    info="Serving tiers have an alert policy on the custom model-quality metric.",
    why="A model can answer fast and without errors and still answer badly. Only a quality "
    "score the serving code publishes shows it, and only an alert makes anyone look.",
    fix="Set gcp.InferenceTier quality (threshold) and publish the metric.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    alerts = [f for _, f, _ in alert_filters(graph) if QUALITY_METRIC_PREFIX in f]
    for template in serving_templates(graph):
        tier = (template.inputs.get("labels") or {}).get("aistack-inference-tier", "")
        if any(f'metric.label.tier="{tier}"' in f for f in alerts):
            yield ok(template, "a model-quality alert watches this tier.")
        else:
            yield fail(template, "no alert on the model's quality.")
