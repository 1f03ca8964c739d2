"""AIS-C6-17: GPU VMs run as their own service account and admit OS Login only."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import gpu_templates, uses_default_compute_account


@rule(
    id="AIS-C6-17",
    checklist=["C6"],
    info="GPU instance templates name a service account other than the Compute Engine "
    "default, enable OS Login and block project-wide SSH keys.",
    why="The default Compute Engine account holds Editor on the project: code on a GPU VM "
    "could change anything. OS Login ties SSH to IAM identities; project-wide SSH keys "
    "would let every key holder in the project onto the VM (Compute Engine docs, 'About "
    "OS Login' and 'Block project-wide SSH keys').",
    fix="Set service_account.email to the training account and metadata enable-oslogin "
    "TRUE and block-project-ssh-keys TRUE (gcp.TrainingPool does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in gpu_templates(graph):
        account = (template.inputs.get("serviceAccount") or {}).get("email")
        metadata = template.inputs.get("metadata") or {}
        problems = []
        if uses_default_compute_account(account):
            problems.append("runs as the Compute Engine default account")
        if str(metadata.get("enable-oslogin", "")).upper() != "TRUE":
            problems.append("OS Login is off")
        if str(metadata.get("block-project-ssh-keys", "")).upper() != "TRUE":
            problems.append("project-wide SSH keys are accepted")
        if problems:
            yield fail(template, "; ".join(problems) + ".")
        else:
            yield ok(template, f"runs as {account}, SSH through OS Login only.")
