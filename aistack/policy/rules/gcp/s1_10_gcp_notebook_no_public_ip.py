"""AIS-S1-10: Vertex AI Workbench notebooks have no external IP address."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import WORKBENCH_INSTANCE, workbench_setup


@rule(
    id="AIS-S1-10",
    checklist=["S1"],
    info="Workbench instances set disable_public_ip and carry no access config.",
    why="Without disable_public_ip Workbench gives the VM an ephemeral external address "
    "(Workbench API, GceSetup.networkInterfaces.accessConfigs: 'If no accessConfigs "
    "specified, the instance will have an external internet access through an ephemeral "
    "external IP address'): a VM holding the team's data, reachable from the internet "
    "wherever a firewall rule lets it. Users reach JupyterLab through the Workbench proxy.",
    fix="Use gcp.Notebook, or set gce_setup.disable_public_ip=true with no "
    "network_interfaces[].access_configs, in a private subnet.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for notebook in graph.of_type(WORKBENCH_INSTANCE):
        setup = workbench_setup(notebook)
        external = [
            nic
            for nic in setup.get("networkInterfaces") or []
            if isinstance(nic, dict) and nic.get("accessConfigs")
        ]
        if external:
            yield fail(notebook, "a network interface carries an external access config.")
        elif setup.get("disablePublicIp") is not True:
            yield fail(notebook, "disable_public_ip is not set: the VM gets an external IP.")
        else:
            yield ok(notebook, "no external IP.")
