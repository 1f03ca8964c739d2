"""AIS-D3-01: training nodes cache the pinned dataset version on local NVMe."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import training_templates, user_data


@rule(
    id="AIS-D3-01",
    checklist=["D3"],
    info="Training node user data mounts the NVMe cache and syncs the dataset by version.",
    why="Reading from object storage every epoch starves GPUs and pays for requests; a "
    "version-keyed cache makes the second epoch and the next boot local.",
    fix="Use aws.TrainingPool, or render user data with aistack.node.render_user_data with "
    "dataset_uri and dataset_version.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in training_templates(graph):
        text = user_data(template)
        if "AISTACK_DATASET_VERSION=" in text and "bootstrap.sh" in text:
            yield ok(template, "NVMe cache + dataset sync keyed by version at boot.")
        else:
            yield fail(template, "does not cache the dataset on local NVMe.")
