"""AIS-C6-16: Vertex AI Workbench notebooks run as a service account of their own."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    GKE_NODE_POOL,
    INSTANCE_TEMPLATES,
    WORKBENCH_INSTANCE,
    node_config,
    uses_default_compute_account,
    workbench_service_account,
)


def _accounts_of_other_workloads(graph: StackGraph) -> set[str]:
    """The accounts GPU nodes and instance templates run as: a notebook sharing one of
    them acts with training's or serving's permissions."""
    found = set()
    for pool in graph.of_type(GKE_NODE_POOL):
        found.add(str(node_config(pool).get("serviceAccount") or ""))
    for template in graph.resources:
        if template.type in INSTANCE_TEMPLATES:
            # Instance templates take one `service_account` block.
            account = template.inputs.get("serviceAccount")
            if isinstance(account, dict):
                found.add(str(account.get("email") or ""))
    found.discard("")
    return found


@rule(
    id="AIS-C6-16",
    checklist=["C6"],
    info="Workbench instances name a service account that is neither the Compute Engine "
    "default account nor one other workloads' nodes run as.",
    why="With no service account Workbench runs the VM as the Compute Engine default "
    "account (Notebooks API, Instance.serviceAccount: 'If not specified, the Compute Engine "
    "default service account is used'), Editor on the project unless someone removed the "
    "grant: every user of the "
    "notebook could change anything in the project. An account shared with training or "
    "inference nodes hands the notebook their data and their permissions.",
    fix="Use gcp.Notebook (it runs as the network's notebook account, e.g. "
    "gcp.WorkloadIdentity's 'notebook' workload, and grants it dataset read and log "
    "writing), or set gce_setup.service_accounts to a dedicated account.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    shared = _accounts_of_other_workloads(graph)
    for notebook in graph.of_type(WORKBENCH_INSTANCE):
        email = workbench_service_account(notebook)
        if email is None:
            yield fail(notebook, "no service account: it runs as the Compute Engine default.")
        elif uses_default_compute_account(email):
            yield fail(notebook, f"runs as the Compute Engine default account {email}.")
        elif email in shared:
            yield fail(notebook, f"shares {email} with GPU nodes of another workload.")
        else:
            yield ok(notebook, f"runs as its own account {email}.")
