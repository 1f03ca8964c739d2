"""AIS-C6-11: ServiceAccounts do not mount their API token unless the workload needs it."""

from collections.abc import Iterator

from aistack.contracts.k8s import NEEDS_API_TOKEN_ANNOTATION as NEEDS_API_TOKEN
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import SERVICE_ACCOUNT, metadata_of

#: The annotation with which a ServiceAccount declares that its pods call the Kubernetes
#: API (k8s.TeamNamespace sets it for `needsApiToken: true`).


@rule(
    id="AIS-C6-11",
    checklist=["C6"],
    info="ServiceAccounts set automountServiceAccountToken: false unless they declare a need.",
    why="Kubernetes mounts a token for the pod's ServiceAccount into every container by "
    "default. A training or serving container does not call the API server, and a token "
    "left in it is what an attacker who gets code execution uses next.",
    fix="Set automountServiceAccountToken: false on the ServiceAccount (k8s.TeamNamespace "
    "does), or, for an operator that calls the API, annotate it "
    f'{NEEDS_API_TOKEN}: "true" (needsApiToken: true).',
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for account in graph.of_type(SERVICE_ACCOUNT):
        name = metadata_of(account).get("name")
        declared = (metadata_of(account).get("annotations") or {}).get(NEEDS_API_TOKEN)
        if account.inputs.get("automountServiceAccountToken") is False:
            yield ok(account, f"ServiceAccount {name!r} mounts no API token.")
        elif declared == "true":
            yield ok(account, f"ServiceAccount {name!r} mounts its token, as it declares.")
        else:
            yield fail(
                account,
                f"ServiceAccount {name!r} mounts its API token into every "
                "pod (automountServiceAccountToken is not false).",
            )
