"""AIS-C6-18: serving VMs run as their own service account, not training's or the default."""

from collections.abc import Iterator

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    serving_templates,
    training_gpu_templates,
    uses_default_compute_account,
)


def _account(template: Resource) -> str:
    return str((template.inputs.get("serviceAccount") or {}).get("email") or "")


@rule(
    id="AIS-C6-18",
    checklist=["C6"],
    info="Serving GPU templates use a service account of their own.",
    why="The serving account may read the models it serves and write logs and metrics; "
    "training's may read datasets and write checkpoints. One account for both lets a "
    "compromised model server read the training data (S1), and the Compute default account "
    "holds Editor on the project.",
    fix="Give gcp.Network (or gcp.WorkloadIdentity) a separate inference account.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    training = {_account(t) for t in training_gpu_templates(graph)} - {""}
    for template in serving_templates(graph):
        account = _account(template)
        if not account or uses_default_compute_account(template):
            yield fail(template, "serving VMs run as the Compute default service account.")
        elif account in training:
            yield fail(template, f"serving VMs share {account} with training VMs.")
        else:
            yield ok(template, f"serving VMs run as {account} alone.")
