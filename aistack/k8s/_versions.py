"""The Kubernetes versions aistack supports: read by the components and by `aistack scan`,
which must not load pulumi_kubernetes to know them."""

__all__ = ["NEWEST_KUBERNETES", "OLDEST_KUBERNETES", "SUPPORTED_KUBERNETES"]

#: The Kubernetes minor versions aistack supports and validates its objects against
#: (tests/k8s/test_schemas.py, kubernetes-validate --strict): 1.30 is the oldest minor
#: still in provider support on EKS and GKE when this was written, and the first with
#: ValidatingAdmissionPolicy GA; 1.37 the newest schema kubernetes-validate 1.37 ships.
OLDEST_KUBERNETES = "1.30"
NEWEST_KUBERNETES = "1.37"
SUPPORTED_KUBERNETES = (OLDEST_KUBERNETES, NEWEST_KUBERNETES)
