"""`k8s.TeamNamespace`: a team's namespace with a hard cost cap, Pod Security `restricted`,
default-deny networking and one ServiceAccount per workload linked to its cloud identity.

What it creates, and why (docs/components/k8s/team-namespace.md says more):

- a Namespace enforcing Pod Security `restricted` at a pinned version (warn and audit too):
  no privileged pods, host paths or host networking, which would step around everything
  below (a hostNetwork pod is not subject to NetworkPolicy);
- a ResourceQuota capping GPU, CPU and memory requests, pods, and load balancers and node
  ports at 0 by default: the cost cap Kubernetes can enforce (C3; the money is the cloud
  budget's). Extended resources are quota'd with the `requests.` prefix only;
- a LimitRange giving containers default requests and a memory limit, so pods that set
  none are still admitted under the quota instead of being refused;
- a default-deny NetworkPolicy for ingress and egress, with allows for DNS, traffic within
  the namespace, the cloud identity endpoint the ServiceAccounts need, and the egress the
  team lists (S1);
- a ServiceAccount per workload with its API token not mounted unless the workload needs
  it, annotated for GKE Workload Identity or EKS IRSA, or documented for EKS Pod Identity
  (whose association is an AWS resource: `aws.WorkloadIdentity` creates it). No Secret
  holds cloud keys (C6).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, field_validator

from aistack.config import AistackModel, Governance
from aistack.contracts.k8s import NEEDS_API_TOKEN_ANNOTATION, parse_quantity
from aistack.errors import Problems
from aistack.k8s._base import (
    OLDEST_KUBERNETES,
    annotations_for,
    child_opts,
    labels_for,
    stateful_opts,
)

__all__ = [
    "EgressAllow",
    "IDENTITY_ENDPOINTS",
    "TeamNamespace",
    "TeamNamespaceArgs",
    "WorkloadAccount",
]

#: apimachinery IsDNS1123Label: namespace and (here) ServiceAccount names, at most 63.
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
_LABEL_VALUE = r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
_GSA_EMAIL = (
    r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com$"
)
_ROLE_ARN = r"^arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$"

Identity = Literal["none", "gke-workload-identity", "eks-irsa", "eks-pod-identity"]

#: Where a pod fetches its cloud credentials, which default-deny egress would block:
#: - GKE Workload Identity: the GKE metadata server. Pods connect to 169.254.169.254:80;
#:   on the iptables dataplane (Calico network policy) the node has already DNATed that to
#:   the metadata daemon at 169.254.169.252:987/988 when policy is judged, on Dataplane V2
#:   policy sees the address the pod used (GKE docs, "Use Workload Identity Federation for
#:   GKE" and "network policy": allow both);
#: - EKS Pod Identity: the Pod Identity agent on each node, 169.254.170.23:80 (EKS docs,
#:   "EKS Pod Identity agent": it listens on 169.254.170.23 and [fd00:ec2::23]);
#: - EKS IRSA: none on the node: the SDK calls STS over HTTPS, which `allow_egress` opens.
IDENTITY_ENDPOINTS: dict[str, tuple[tuple[str, int], ...]] = {
    "gke-workload-identity": (
        ("169.254.169.254/32", 80),
        ("169.254.169.252/32", 987),
        ("169.254.169.252/32", 988),
    ),
    "eks-pod-identity": (("169.254.170.23/32", 80), ("fd00:ec2::23/128", 80)),
}

#: Pod Security Admission levels and the namespace labels that set them (Kubernetes docs,
#: "Enforce Pod Security Standards with Namespace Labels").
PSS_MODES = ("enforce", "audit", "warn")
PSS_LEVEL = "restricted"


class WorkloadAccount(AistackModel):
    """One workload's ServiceAccount and the cloud identity it acts as."""

    name: str = Field(
        pattern=_DNS_LABEL,
        description="The ServiceAccount name (a DNS-1123 label); pods name it in "
        "`serviceAccountName`. 'default' is refused: Kubernetes creates and owns it.",
    )
    needs_api_token: bool = Field(
        False,
        description="Mount the Kubernetes API token into the workload's pods "
        "(`automountServiceAccountToken`). Off: a training or serving container has no "
        "business calling the API server, and a stolen token is a foothold (C6).",
    )
    identity: Identity = Field(
        "none",
        description="How the workload gets cloud credentials without keys: "
        "'gke-workload-identity' (annotation iam.gke.io/gcp-service-account), 'eks-irsa' "
        "(annotation eks.amazonaws.com/role-arn), 'eks-pod-identity' (an EKS Pod Identity "
        "association on the AWS side, which aws.WorkloadIdentity creates; nothing on the "
        "ServiceAccount), or 'none'.",
    )
    gcp_service_account: str | None = Field(
        None,
        pattern=_GSA_EMAIL,
        description="gke-workload-identity: the Google service account's e-mail (or pass "
        "it as an Output in the component's `identities=`).",
    )
    aws_role_arn: str | None = Field(
        None,
        pattern=_ROLE_ARN,
        description="eks-irsa / eks-pod-identity: the IAM role's ARN (or pass it as an "
        "Output in the component's `identities=`).",
    )


class EgressAllow(AistackModel):
    """Egress the namespace's pods may open beyond DNS, the namespace and the identity
    endpoint: object storage, a registry, STS for IRSA, an experiment tracker."""

    cidr: str = Field(
        description="Destination range, e.g. '199.36.153.8/30' (Google APIs "
        "via Private Google Access) or a VPC endpoint subnet."
    )
    ports: tuple[int, ...] = Field((443,), min_length=1, description="TCP ports. Default 443.")
    except_cidrs: tuple[str, ...] = Field((), description="Ranges inside `cidr` still denied.")
    purpose: str = Field(min_length=1, description="Why: recorded in the policy's annotation.")

    @field_validator("cidr")
    @classmethod
    def _is_a_network(cls, cidr: str) -> str:
        try:
            ipaddress.ip_network(cidr)
        except ValueError:
            raise ValueError(
                f"{cidr!r} is not a CIDR range. Fix: write it like '10.0.0.0/16'."
            ) from None
        return cidr

    @field_validator("ports")
    @classmethod
    def _are_ports(cls, ports: tuple[int, ...]) -> tuple[int, ...]:
        bad = [p for p in ports if not 1 <= p <= 65535]
        if bad:
            raise ValueError(f"ports {bad} are outside 1-65535. Fix: use TCP port numbers.")
        return ports


class TeamNamespaceArgs(AistackModel):
    governance: Governance
    team: str = Field(
        pattern=_LABEL_VALUE,
        description="The team, as the `aistack.dev/team` label: queues and policies select "
        "namespaces on it.",
    )
    namespace: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description="The namespace's name (DNS-1123 label). Default: the component's name. "
        "Always explicit, never auto-named: queues and pods refer to it by name.",
    )
    tier: Literal["train", "serve"] = Field(
        "train",
        description="What runs here: training or serving. Serving and training belong in "
        "separate namespaces (S1).",
    )
    gpus: int = Field(
        ge=0,
        description="Hard cap on GPUs requested by all pods together "
        "(`requests.nvidia.com/gpu`). Required: the cost cap is a decision (C3). 0 for a "
        "namespace that runs no GPU work.",
    )
    gpu_resource: str = Field(
        "nvidia.com/gpu",
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
        description="The device plugin's extended resource: nvidia.com/gpu (default), "
        "amd.com/gpu, ... Quota'd as `requests.<resource>`: extended resources take the "
        "requests. prefix only.",
    )
    cpu: str = Field("64", description="Hard cap on CPU requested (`requests.cpu`).")
    memory: str = Field("256Gi", description="Hard cap on memory requested (`requests.memory`).")
    max_pods: int = Field(100, ge=1, description="Hard cap on pods in the namespace.")
    max_load_balancers: int = Field(
        0,
        ge=0,
        description="Services of type LoadBalancer allowed (`services.loadbalancers`). "
        "Default 0: each one is a billed cloud load balancer, and a public one an exposure; "
        "serving goes through the team's gateway.",
    )
    max_node_ports: int = Field(
        0, ge=0, description="NodePort services allowed (`services.nodeports`). Default 0."
    )
    default_cpu_request: str = Field(
        "250m", description="CPU request given to containers that set none (LimitRange)."
    )
    default_memory_request: str = Field(
        "512Mi", description="Memory request given to containers that set none."
    )
    default_memory_limit: str = Field(
        "2Gi",
        description="Memory limit given to containers that set none: memory cannot be "
        "throttled, so a container without a limit can take the node's.",
    )
    pod_security_version: str = Field(
        f"v{OLDEST_KUBERNETES}",
        pattern=r"^v1\.\d{2}$",
        description="The Pod Security Standards version the namespace pins "
        "(`enforce-version`). Pinned, never 'latest': a cluster upgrade must not change "
        "which pods are admitted. Default: the oldest Kubernetes version aistack supports.",
    )
    service_accounts: tuple[WorkloadAccount, ...] = Field(
        (), description="One per workload (trainer, server, notebook...)."
    )
    allow_egress: tuple[EgressAllow, ...] = Field(
        (),
        description="Egress beyond DNS, the namespace and the identity endpoint. Default "
        "none: list object storage, registry and STS ranges explicitly.",
    )
    allow_destroy: bool = Field(
        False,
        description="Let `pulumi destroy` delete the namespace, and so everything in it "
        "(jobs, volumes, checkpoints on PVCs). Off: it is retained, and protected in prod.",
    )

    @field_validator(
        "cpu", "memory", "default_cpu_request", "default_memory_request", "default_memory_limit"
    )
    @classmethod
    def _is_a_quantity(cls, text: str) -> str:
        try:
            value = parse_quantity(text)
        except ValueError as error:
            raise ValueError(f"{error}. Fix: write e.g. '64', '500m' or '256Gi'.") from None
        if value < 0:
            raise ValueError(f"{text!r} is negative. Fix: quotas and limits are >= 0.")
        return text


class TeamNamespace(pulumi.ComponentResource):
    """A team's namespace: quota'd, Pod Security restricted, default-deny, keyless."""

    args: TeamNamespaceArgs
    namespace: k8s.core.v1.Namespace
    namespace_name: pulumi.Output[str]
    quota: k8s.core.v1.ResourceQuota
    limits: k8s.core.v1.LimitRange
    network_policies: dict[str, k8s.networking.v1.NetworkPolicy]
    service_accounts: dict[str, k8s.core.v1.ServiceAccount]

    def __init__(
        self,
        name: str,
        args: TeamNamespaceArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        identities: Mapping[str, pulumi.Input[str]] | None = None,
    ) -> None:
        """`identities`: a workload's cloud identity as an Output, by ServiceAccount name:
        the Google service account e-mail (gke-workload-identity) or the IAM role ARN
        (eks-irsa, eks-pod-identity) from the cloud's WorkloadIdentity."""
        given = dict(identities or {})

        def checks(args: TeamNamespaceArgs) -> None:
            _check(name, args, given)

        args = TeamNamespaceArgs.validate_with(args, checks, where=name)[0]
        super().__init__("aistack:index:K8sTeamNamespace", name, None, opts)
        self.args = args
        namespace = args.namespace or name
        governance = args.governance
        extra = {"team": args.team, "tier": args.tier}

        ns_labels = labels_for(governance, **extra)
        for mode in PSS_MODES:
            ns_labels[f"pod-security.kubernetes.io/{mode}"] = PSS_LEVEL
            ns_labels[f"pod-security.kubernetes.io/{mode}-version"] = args.pod_security_version
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={
                "name": namespace,
                "labels": ns_labels,
                "annotations": annotations_for(governance),
            },
            opts=stateful_opts(self, governance, allow_destroy=args.allow_destroy),
        )
        self.namespace_name = self.namespace.metadata.apply(lambda m: str(m.name))
        opts_in = child_opts(self, depends_on=[self.namespace])

        def metadata(object_name: str, **annotations: str) -> Any:
            return {
                "name": object_name,
                "namespace": self.namespace_name,
                "labels": labels_for(governance, **extra),
                **({"annotations": annotations} if annotations else {}),
            }

        self.quota = k8s.core.v1.ResourceQuota(
            f"{name}-quota",
            metadata=metadata("aistack-quota"),
            spec=_untyped({"hard": _quota(args)}),
            opts=opts_in,
        )
        self.limits = k8s.core.v1.LimitRange(
            f"{name}-limits",
            metadata=metadata("aistack-defaults"),
            spec=_untyped(
                {
                    "limits": [
                        {
                            "type": "Container",
                            "defaultRequest": {
                                "cpu": args.default_cpu_request,
                                "memory": args.default_memory_request,
                            },
                            "default": {"memory": args.default_memory_limit},
                        }
                    ]
                }
            ),
            opts=opts_in,
        )

        self.network_policies = {}
        for role, spec, why in _network_policies(args):
            self.network_policies[role] = k8s.networking.v1.NetworkPolicy(
                f"{name}-{role}",
                metadata=metadata(f"aistack-{role}", **{"aistack.dev/purpose": why}),
                spec=_untyped(spec),
                opts=opts_in,
            )

        self.service_accounts = {}
        for account in args.service_accounts:
            identity = (
                given.get(account.name) or account.gcp_service_account or account.aws_role_arn
            )
            annotations = _identity_annotations(account.identity, identity)
            if account.needs_api_token:
                # Declared, so AIS-C6-11 can tell a deliberate token from a forgotten one.
                annotations[NEEDS_API_TOKEN_ANNOTATION] = "true"
            self.service_accounts[account.name] = k8s.core.v1.ServiceAccount(
                f"{name}-sa-{account.name}",
                metadata={
                    **metadata(account.name),
                    "labels": labels_for(governance, workload=account.name, **extra),
                    **({"annotations": annotations} if annotations else {}),
                },
                automount_service_account_token=account.needs_api_token,
                opts=opts_in,
            )
        self.service_account_names = {
            key: account.metadata.apply(lambda m: m.name)
            for key, account in self.service_accounts.items()
        }
        self.register_outputs(
            {
                "namespace_name": self.namespace_name,
                "service_account_names": self.service_account_names,
            }
        )

    @property
    def selector_labels(self) -> dict[str, str]:
        """Labels that select this namespace (a Kueue ClusterQueue's namespaceSelector)."""
        return {"aistack.dev/team": self.args.team, "aistack.dev/tier": self.args.tier}


def _as_label(name: str) -> str:
    """`name` made into an RFC 1123 label, for the fix a message suggests."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", name.lower())).strip("-")[:63] or "team"


def _check(name: str, args: TeamNamespaceArgs, identities: Mapping[str, Any]) -> None:
    problems = Problems()
    if args.namespace is None and not re.fullmatch(_DNS_LABEL, name):
        # The component's name becomes the namespace's: the API server would refuse it.
        problems.add(
            f"{name}.namespace",
            f"the namespace would be named {name!r}, the component's name, which is not an "
            "RFC 1123 label (lowercase letters, digits and '-', at most 63 characters, "
            "starting and ending with a letter or digit).",
            f"name the component {_as_label(name)!r}, or set namespace to such a name.",
        )
    seen: set[str] = set()
    names = {account.name for account in args.service_accounts}
    for index, account in enumerate(args.service_accounts):
        at = f"{name}.serviceAccounts.{index}"
        if account.name == "default":
            problems.add(
                f"{at}.name",
                "'default' is the ServiceAccount Kubernetes creates in every namespace.",
                "name the workload's own account, e.g. 'trainer'.",
            )
        if account.name in seen:
            problems.add(f"{at}.name", f"{account.name!r} is listed twice.", "name each once.")
        seen.add(account.name)
        has_output = account.name in identities
        if account.identity == "gke-workload-identity":
            if account.aws_role_arn:
                problems.add(
                    f"{at}.awsRoleArn",
                    "is an AWS role on a GKE identity.",
                    "set gcpServiceAccount, or identity: eks-irsa.",
                )
            if not (account.gcp_service_account or has_output):
                problems.add(
                    f"{at}.gcpServiceAccount",
                    "is required for gke-workload-identity.",
                    "set the Google service account e-mail, or pass it in identities=.",
                )
        elif account.identity in ("eks-irsa", "eks-pod-identity"):
            if account.gcp_service_account:
                problems.add(
                    f"{at}.gcpServiceAccount",
                    "is a Google account on an EKS identity.",
                    "set awsRoleArn, or identity: gke-workload-identity.",
                )
            if not (account.aws_role_arn or has_output):
                problems.add(
                    f"{at}.awsRoleArn",
                    f"is required for {account.identity}.",
                    "set the IAM role ARN, or pass it in identities=.",
                )
        elif account.gcp_service_account or account.aws_role_arn or has_output:
            problems.add(
                f"{at}.identity",
                "is 'none' but a cloud identity is given.",
                "set identity to gke-workload-identity, eks-irsa or eks-pod-identity.",
            )
    for key in identities:
        if key not in names:
            problems.add(
                f"{name}.identities.{key}",
                "names no ServiceAccount in serviceAccounts.",
                f"use one of {sorted(names) or 'none'}.",
            )
    if args.gpu_resource.split("/", 1)[0].endswith("kubernetes.io"):
        problems.add(
            f"{name}.gpuResource",
            "is in the kubernetes.io domain, which extended resources may not use.",
            "use the device plugin's name, e.g. nvidia.com/gpu.",
        )
    request, limit = (
        parse_quantity(args.default_memory_request),
        parse_quantity(args.default_memory_limit),
    )
    if request > limit:
        # The API server refuses such a LimitRange (ValidateLimitRange: default request
        # must be <= default limit).
        problems.add(
            f"{name}.defaultMemoryRequest",
            f"{args.default_memory_request} is above "
            f"defaultMemoryLimit {args.default_memory_limit}.",
            "lower it.",
        )
    for field, default, cap in (
        ("defaultCpuRequest", args.default_cpu_request, args.cpu),
        ("defaultMemoryRequest", args.default_memory_request, args.memory),
    ):
        if parse_quantity(default) > parse_quantity(cap):
            problems.add(
                f"{name}.{field}",
                f"{default} is above the namespace's quota {cap}: "
                "no pod taking the default would be admitted.",
                "lower it or raise the quota.",
            )
    uses_irsa = any(a.identity == "eks-irsa" for a in args.service_accounts)
    if uses_irsa and not any(443 in e.ports for e in args.allow_egress):
        problems.add(
            f"{name}.allowEgress",
            "IRSA workloads call AWS STS over HTTPS, which the default-deny egress policy blocks.",
            "allow TCP 443 to the STS VPC endpoint's subnet (or the range your proxy uses).",
        )
    problems.raise_if_any()


def _untyped(document: dict[str, Any]) -> Any:
    """A plain dict where pulumi-kubernetes types its TypedDicts: the shape is checked by
    kubernetes-validate against the API's schemas (tests/k8s/test_schemas.py)."""
    return document


def _quota(args: TeamNamespaceArgs) -> dict[str, str]:
    # Kubernetes docs, "Resource Quotas" > "Resource quota for extended resources": "only
    # quota items with the prefix requests. are allowed" (limits.nvidia.com/gpu is refused).
    return {
        "requests.cpu": args.cpu,
        "requests.memory": args.memory,
        f"requests.{args.gpu_resource}": str(args.gpus),
        "pods": str(args.max_pods),
        "services.loadbalancers": str(args.max_load_balancers),
        "services.nodeports": str(args.max_node_ports),
    }


def _network_policies(args: TeamNamespaceArgs) -> list[tuple[str, dict[str, Any], str]]:
    """(role, spec, why) for each NetworkPolicy. Policies are additive: the default deny
    selects every pod for both directions, and each allow opens one path."""
    everything: dict[str, Any] = {}
    policies: list[tuple[str, dict[str, Any], str]] = [
        (
            "default-deny",
            {"podSelector": everything, "policyTypes": ["Ingress", "Egress"]},
            "Deny all ingress and egress not allowed by another policy (S1).",
        ),
        (
            "allow-dns",
            {
                "podSelector": everything,
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        # CoreDNS/kube-dns pods carry k8s-app: kube-dns on GKE, EKS, kind
                        # and kubeadm clusters; the namespace label is set by the API server.
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                },
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    }
                ],
            },
            "Name resolution through the cluster DNS.",
        ),
        (
            "allow-same-namespace",
            {
                "podSelector": everything,
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": [{"podSelector": everything}]}],
                "egress": [{"to": [{"podSelector": everything}]}],
            },
            "Pods of this namespace reach each other (distributed training, sidecars).",
        ),
    ]
    endpoints = sorted(
        {e for a in args.service_accounts for e in IDENTITY_ENDPOINTS.get(a.identity, ())}
    )
    if endpoints:
        policies.append(
            (
                "allow-cloud-identity",
                {
                    "podSelector": everything,
                    "policyTypes": ["Egress"],
                    "egress": [
                        {
                            "to": [{"ipBlock": {"cidr": cidr}}],
                            "ports": [{"protocol": "TCP", "port": port}],
                        }
                        for cidr, port in endpoints
                    ],
                },
                "Credentials from the node's identity endpoint, not from stored keys (C6).",
            )
        )
    if args.allow_egress:
        rules = []
        for allow in args.allow_egress:
            block: dict[str, Any] = {"cidr": allow.cidr}
            if allow.except_cidrs:
                block["except"] = list(allow.except_cidrs)
            rules.append(
                {
                    "to": [{"ipBlock": block}],
                    "ports": [{"protocol": "TCP", "port": port} for port in allow.ports],
                }
            )
        policies.append(
            (
                "allow-egress",
                {"podSelector": everything, "policyTypes": ["Egress"], "egress": rules},
                "; ".join(f"{a.cidr}: {a.purpose}" for a in args.allow_egress),
            )
        )
    return policies


def _identity_annotations(identity: Identity, value: pulumi.Input[str] | None) -> dict[str, Any]:
    if value is None or identity == "none":
        return {}
    if identity == "gke-workload-identity":
        # GKE docs, "Use Workload Identity Federation for GKE" (link KSAs to IAM service
        # accounts): the GSA also needs roles/iam.workloadIdentityUser for
        # serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>].
        return {"iam.gke.io/gcp-service-account": value}
    if identity == "eks-irsa":
        # EKS docs, "Assign IAM roles to Kubernetes service accounts".
        return {"eks.amazonaws.com/role-arn": value}
    # EKS Pod Identity needs nothing on the ServiceAccount (the association names it);
    # the role is recorded for whoever audits the namespace.
    return {"aistack.dev/eks-pod-identity-role-arn": value}
