"""A team's namespaces on an existing GKE (or any) cluster: one to train in and one to
serve from, each quota'd, Pod Security restricted and default-deny, with keyless
ServiceAccounts. Queues, job templates and monitoring come with the next components.

    aistack preview stacks/kubernetes        # offline
    cd stacks/kubernetes && pulumi up         # for real, against the kubeconfig's cluster
"""

import pulumi

from aistack import k8s

config = pulumi.Config()
team = config.require("team")
governance = {
    "owner": team,
    "costCenter": f"{team}-research",
    "allowedRegions": ["europe-west4"],
}
# Google APIs through Private Google Access (private.googleapis.com), e.g. GCS.
google_apis = {"cidr": "199.36.153.8/30", "purpose": "Google APIs: datasets, checkpoints"}

train = k8s.TeamNamespace(
    f"{team}-train",
    {
        "team": team,
        "tier": "train",
        "gpus": config.require_int("trainingGpus"),
        "cpu": "96",
        "memory": "768Gi",
        "governance": governance,
        "serviceAccounts": [
            {
                "name": "trainer",
                "identity": "gke-workload-identity",
                "gcpServiceAccount": config.require("trainerServiceAccount"),
            }
        ],
        "allowEgress": [google_apis],
    },
)
serve = k8s.TeamNamespace(
    f"{team}-serve",
    {
        "team": team,
        "tier": "serve",
        "gpus": config.require_int("servingGpus"),
        "governance": governance,
        "serviceAccounts": [{"name": "server"}],
    },
)

pulumi.export("trainingNamespace", train.namespace_name)
pulumi.export("servingNamespace", serve.namespace_name)
