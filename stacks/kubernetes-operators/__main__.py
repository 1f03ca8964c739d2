"""The operators aistack's Kubernetes components need, from pinned Helm charts, in a stack of
their own: Kueue and JobSet (k8s.TrainingQueue, k8s.TrainingJobTemplate), KEDA (the
inference service's queue-metric autoscaling), the Prometheus Operator (k8s.GpuMonitoring's
ServiceMonitor and PrometheusRule, through kube-prometheus-stack), NVIDIA's DCGM exporter (the
GPU metrics) and device plugin (which makes `nvidia.com/gpu` schedulable), the Gateway API
CRDs (the inference service's HTTPRoute) and, on EKS, Karpenter's controller
(aws.KarpenterGpuPool's NodePools).

Why a stack of its own: a custom resource cannot be previewed, or created by `pulumi up`, in
the program that installs its CRD; the preview asks the cluster for a kind it does not serve
yet (pulumi/pulumi-kubernetes#3247, "Depending on Helm Chart that installs CRDs does not
work"; #1712, #3176). So this stack runs first, and the stacks with the custom resources
(stacks/kubernetes, stacks/kubernetes-eks, stacks/kubernetes-gke) after it.

Each operator is installed at the release whose CRDs aistack keeps and validates its custom
resources against (aistack/scan/data/crds/, SOURCES.md), in its own namespace (Pod Security
`restricted` where the chart's pods comply, a GPU and load-balancer quota of 0, default-deny
NetworkPolicies with the ports it serves and the API server it calls), with the image the
chart pins for that release. `gke: true` leaves out what GKE manages (gcp.GkeCluster turns
on managed Prometheus with DCGM and the Gateway API's standard CRDs; GKE installs the device
plugin with its managed driver) and, in place of KEDA, installs the Custom Metrics
Stackdriver Adapter, which serves the `custom.metrics.k8s.io` the GKE stacks' HPA reads;
`eks: true` adds Karpenter. The device plugin and Karpenter go to kube-system, where their
installers put them (below).

Every operator namespace whose chart installs its images by tag is labelled
`aistack.dev/image-policy: exempt` (with the reason): k8s.ImagePolicy, which the stacks
after this one install, refuses images without a digest in every aistack namespace but
those, and would otherwise refuse the operators' pods (AIS-E1-09 holds it). Kueue's
metrics, which k8s.GpuMonitoring's queue alerts read, are scraped over HTTPS with a bearer
token: a ServiceMonitor through kube-prometheus-stack, or on GKE a PodMonitoring.

    aistack preview stacks/kubernetes-operators      # offline: no chart is fetched
    cd stacks/kubernetes-operators && pulumi up -s dev   # for real (or -s gke, -s eks)
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes
import yaml
from pydantic import Field, field_validator, model_validator

from aistack.config import AistackModel, Governance, parse_all
from aistack.contracts.images import reference_problem
from aistack.contracts.k8s import NEEDS_API_TOKEN_ANNOTATION, OLDEST_KUBERNETES, TIER_LABEL
from aistack.contracts.k8s_admission import image_policy_exemption
from aistack.k8s import EgressAllow, annotations_for, labels_for
from aistack.k8s.team_namespace import IDENTITY_ENDPOINTS

#: The releases installed here. `crds` is the directory of aistack/scan/data/crds whose
#: CRDs the components render against (tests/test_kubernetes_operators.py proves each
#: chart's release equals it), `release` the upstream release the chart installs.
#: - Kueue and JobSet publish a chart per release at registry.k8s.io, chart version = the
#:   tag without `v`, image registry.k8s.io/<project>/<project>:<tag>, IfNotPresent
#:   (kueue v0.19.2 and jobset v0.12.0 hack/helm-chart-package.sh, charts/*/README.md).
#: - KEDA: kedacore/charts tag v2.20.2, keda/Chart.yaml version = appVersion 2.20.2; the
#:   images' tag "" means the appVersion (keda/values.yaml).
#: - Prometheus Operator: kube-prometheus-stack 88.3.0 (prometheus-community/helm-charts tag
#:   kube-prometheus-stack-88.3.0, Chart.yaml appVersion v0.93.0: the last chart on
#:   v0.93.0; 88.4.0 moves to v0.93.1), its CRDs from prometheus-operator-crds 31.0.0
#:   (appVersion v0.93.0), whose CRDs are templates, so a chart upgrade upgrades them.
#:   Helm installs a chart's crds/ directory on the first install only and never upgrades
#:   it (Helm docs, "Custom Resource Definitions" best practices), which is where
#:   kube-prometheus-stack and the karpenter chart keep theirs: the CRDs would stay at the
#:   first release while the operator moves on. Karpenter's upgrade guide (v1.14.1,
#:   "CRD Upgrades") recommends its karpenter-crd chart for the same reason. JobSet has no
#:   CRD chart (charts/jobset/crds/): upgrading it, apply the new release's CRD first.
#: - DCGM exporter: NVIDIA/dcgm-exporter tag 4.5.3-4.8.2, deployment/Chart.yaml version
#:   4.8.2, image nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless
#:   (deployment/values.yaml); no CRDs. k8s.GpuMonitoring's `dcgm-exporter-chart` exporter
#:   is written against this chart.
#: - NVIDIA device plugin: NVIDIA/k8s-device-plugin tag v0.20.0, deployments/helm/
#:   nvidia-device-plugin/Chart.yaml version = appVersion 0.20.0 (image tag "": the
#:   appVersion). Without it no node advertises `nvidia.com/gpu` and no GPU pod schedules:
#:   the EKS AL2023 NVIDIA AMI ships the driver, not the plugin (docs/components/
#:   aws/karpenter-gpu-pool.md). GKE installs its own with the managed driver.
#: - Gateway API: not a chart; the release's standard-channel manifest (kubernetes-sigs/
#:   gateway-api release v1.6.1, standard-install.yaml).
#: - Karpenter: oci://public.ecr.aws/karpenter/karpenter at the release's version
#:   (karpenter-provider-aws v1.14.1 hack/release/common.sh publishHelmChart), the release
#:   aws.KarpenterGpuPool renders its NodePool and EC2NodeClass for.
#: - Custom Metrics Stackdriver Adapter (GKE only): no chart; its objects are rendered
#:   below from GoogleCloudPlatform/k8s-stackdriver commit af49d863755c0535f598cfde9288ae
#:   9a75251d38 (2026-08-17), custom-metrics-stackdriver-adapter/deploy/production/
#:   adapter_new_resource_model.yaml, image v0.16.9-gke.0 (line 100), taken by digest
#:   from the config (`customMetricsAdapter.image`).
CHARTS: dict[str, dict[str, Any]] = {
    "kueue": {
        "chart": "oci://registry.k8s.io/kueue/charts/kueue",
        "version": "0.19.2",
        "release": "v0.19.2",
        "crds": "kueue",
        "namespace": "kueue-system",
    },
    "jobset": {
        "chart": "oci://registry.k8s.io/jobset/charts/jobset",
        "version": "0.12.0",
        "release": "v0.12.0",
        "crds": "jobset",
        "namespace": "jobset-system",
    },
    "keda": {
        "chart": "keda",
        "repo": "https://kedacore.github.io/charts",
        "version": "2.20.2",
        "release": "v2.20.2",
        "crds": "keda",
        "namespace": "keda",
    },
    "prometheus-operator-crds": {
        "chart": "prometheus-operator-crds",
        "repo": "https://prometheus-community.github.io/helm-charts",
        "version": "31.0.0",
        "release": "v0.93.0",
        "crds": "prometheus-operator",
        "namespace": "monitoring",
    },
    "kube-prometheus-stack": {
        "chart": "kube-prometheus-stack",
        "repo": "https://prometheus-community.github.io/helm-charts",
        "version": "88.3.0",
        "release": "v0.93.0",
        "crds": "prometheus-operator",
        "namespace": "monitoring",
    },
    "dcgm-exporter": {
        "chart": "dcgm-exporter",
        "repo": "https://nvidia.github.io/dcgm-exporter/helm-charts",
        "version": "4.8.2",
        "release": "4.8.2",
        "crds": None,
        "namespace": "dcgm-exporter",
    },
    "nvidia-device-plugin": {
        "chart": "nvidia-device-plugin",
        "repo": "https://nvidia.github.io/k8s-device-plugin",
        "version": "0.20.0",
        "release": "v0.20.0",
        "crds": None,
        "namespace": "kube-system",
    },
    "gateway-api": {
        "manifest": "https://github.com/kubernetes-sigs/gateway-api/releases/download/"
        "v1.6.1/standard-install.yaml",
        "release": "v1.6.1",
        "crds": "gateway-api",
    },
    "karpenter-crd": {
        "chart": "oci://public.ecr.aws/karpenter/karpenter-crd",
        "version": "1.14.1",
        "release": "v1.14.1",
        "crds": "karpenter",
        "namespace": "kube-system",
    },
    "karpenter": {
        "chart": "oci://public.ecr.aws/karpenter/karpenter",
        "version": "1.14.1",
        "release": "v1.14.1",
        "crds": "karpenter",
        "namespace": "kube-system",
    },
    "custom-metrics-stackdriver-adapter": {
        "rendered_from": "https://github.com/GoogleCloudPlatform/k8s-stackdriver/blob/"
        "af49d863755c0535f598cfde9288ae9a75251d38/custom-metrics-stackdriver-adapter/deploy/"
        "production/adapter_new_resource_model.yaml",
        "release": "v0.16.9-gke.0",
        "crds": None,
        "namespace": "custom-metrics",
    },
}
#: GKE manages these when gcp.GkeCluster creates the cluster: Managed Service for
#: Prometheus and the managed DCGM exporter (monitoring_config enable_components DCGM,
#: managed_prometheus), and the Gateway API CRDs (gateway_api_config CHANNEL_STANDARD:
#: "Gateway API support is enabled, standard CRDs are installed", GKE API
#: GatewayAPIConfig.Channel); GKE also runs the NVIDIA device plugin on GPU nodes with the
#: driver it installs (gcp.GpuNodePool's gpuDriverInstallationConfig). Installing them
#: again would fight GKE's own copies.
GKE_MANAGED = (
    "nvidia-device-plugin",
    "prometheus-operator-crds",
    "kube-prometheus-stack",
    "dcgm-exporter",
    "gateway-api",
)
#: Installed only with `eks: true`.
EKS_ONLY = ("karpenter-crd", "karpenter")
#: Installed only with `gke: true`: the GKE stacks (stacks/kubernetes-gke, stacks/kubernetes)
#: autoscale serving with an HPA on `prometheus.googleapis.com|vllm:num_requests_waiting|
#: gauge`, a Pods metric the HPA reads from `custom.metrics.k8s.io` (Kubernetes docs,
#: "HorizontalPodAutoscaler Walkthrough", autoscaling on custom metrics), which on GKE only
#: this adapter serves from Cloud Monitoring.
GKE_ONLY = ("custom-metrics-stackdriver-adapter",)
#: Not installed with `gke: true`: KEDA serves the GKE stacks nothing (they scale with the
#: HPA above, not with ScaledObjects) and would hold a ClusterRole and an APIService
#: (`v1beta1.external.metrics.k8s.io`) for no workload. KEDA stays the autoscaler off GKE
#: (stacks/kubernetes-eks, `autoscaling.kind: keda` on kube-prometheus-stack).
NOT_ON_GKE = ("keda",)

#: The ports each operator's pods serve to callers outside their namespace, from the
#: charts at the pinned tags: the API server calls webhooks and aggregated APIs, Prometheus
#: scrapes metrics. Kueue charts/kueue/templates/manager/manager.yaml (8082 visibility
#: APIService, 9443 webhook, 8443 metrics); JobSet charts/jobset/templates/controller/
#: deployment.yaml (9443, 8443); KEDA keda/values.yaml (service.portHttpsTarget 6443 for
#: the external-metrics APIService, webhooks 9443, operator metrics 8080);
#: kube-prometheus-stack values.yaml (prometheusOperator tls.internalPort 10250 for its
#: admission webhook; Prometheus 9090 and Alertmanager 9093, the operator's defaults);
#: dcgm-exporter values.yaml (service.port 9400); the custom metrics adapter's secure port,
#: which this stack moves from 443 to 6443 (`--secure-port`, below).
SERVED_PORTS: dict[str, tuple[int, ...]] = {
    "kueue": (8082, 9443, 8443),
    "jobset": (9443, 8443),
    "keda": (6443, 9443, 8080),
    "kube-prometheus-stack": (10250, 9090, 9093),
    "dcgm-exporter": (9400,),
    "custom-metrics-stackdriver-adapter": (6443,),
}

#: The operators whose charts install their images by tag, at the pinned releases: their
#: namespaces are labelled exempt from k8s.ImagePolicy (aistack.contracts.k8s_admission),
#: which the stacks after this one install cluster-wide. Selected by it, every new pod of
#: theirs would be refused ("container manager ... has no image digest"): an `atomic`
#: install rolls back, and after a node drain the operators do not come back; with Kueue's
#: webhooks (`failurePolicy: Fail`, every namespace but kube-system and kueue-system:
#: kueue v0.19.2 charts/kueue/templates/webhook/manifests.yaml) that refuses every
#: Deployment and Job in the cluster. Pinning the charts' images by digest in their values
#: instead would take a digest per image per release, looked up in each registry.
TAG_ONLY_IMAGES: dict[str, str] = {
    "kueue": "the kueue 0.19.2 chart installs registry.k8s.io/kueue/kueue:v0.19.2 by tag "
    "(kubernetes-sigs/kueue v0.19.2 charts/kueue/values.yaml:47-51 repository and tag, "
    "which hack/helm-chart-package.sh:75 sets to the release tag)",
    "jobset": "the jobset 0.12.0 chart installs registry.k8s.io/jobset/jobset:v0.12.0 by tag "
    "(kubernetes-sigs/jobset v0.12.0 charts/jobset/values.yaml:24-26, "
    "hack/helm-chart-package.sh:48 sets the tag)",
    "keda": "the keda 2.20.2 chart installs ghcr.io/kedacore images by tag, the appVersion "
    '(kedacore/charts v2.20.2 keda/values.yaml:22-43, tag "")',
    "kube-prometheus-stack": "kube-prometheus-stack 88.3.0 installs quay.io/prometheus* "
    'images by tag, sha "" (prometheus-community/helm-charts kube-prometheus-stack-88.3.0 '
    "charts/kube-prometheus-stack/values.yaml, e.g. lines 3010-3015)",
    "dcgm-exporter": "the dcgm-exporter 4.8.2 chart installs "
    "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless by tag (NVIDIA/dcgm-exporter "
    "4.5.3-4.8.2 deployment/values.yaml:15-20)",
}


class ApiServer(AistackModel):
    """Where the API server answers pods: the operators' one egress besides DNS."""

    cidrs: tuple[str, ...] = Field(
        min_length=1,
        description="The control plane's addresses (GKE: the private endpoint's range; EKS: "
        "the VPC, where its endpoint ENIs are; kubeadm: the control-plane nodes).",
    )
    port: int = Field(ge=1, le=65535, description="443 on GKE and EKS, 6443 on kubeadm and kind.")

    @field_validator("cidrs")
    @classmethod
    def _networks(cls, cidrs: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in cidrs:
            try:
                ipaddress.ip_network(cidr)
            except ValueError:
                raise ValueError(
                    f"{cidr!r} is not a CIDR range. Fix: write it like '172.16.0.0/28'."
                ) from None
        return cidrs


class KarpenterValues(AistackModel):
    """aws.KarpenterGpuPool.helm_values(): what the controller must be installed with."""

    settings: dict[str, str]
    service_account: dict[str, str]
    namespace: str = "kube-system"

    @model_validator(mode="after")
    def _settings(self) -> KarpenterValues:
        missing = {"clusterName", "interruptionQueue"} - set(self.settings)
        if missing:
            raise ValueError(
                f"settings lacks {sorted(missing)}. Fix: pass the pool's helm_values() "
                "(stacks/kubernetes-eks output karpenterHelmValues)."
            )
        return self


class CustomMetricsAdapter(AistackModel):
    """The Custom Metrics Stackdriver Adapter (installed with `gke: true`): its image and
    the Google service account it reads Cloud Monitoring as."""

    image: str = Field(
        description="The adapter's image by digest, e.g. gcr.io/gke-release/"
        "custom-metrics-stackdriver-adapter:v0.16.9-gke.0@sha256:<digest> (`docker buildx "
        "imagetools inspect` prints it). By digest: k8s.ImagePolicy judges its namespace."
    )
    gcp_service_account: str = Field(
        pattern=r"^[a-z][-a-z0-9]{4,28}[a-z0-9]@[a-z][-a-z0-9.:]*\.iam\.gserviceaccount\.com$",
        description="The Google service account the adapter acts as through Workload "
        "Identity: it holds roles/monitoring.viewer on the cluster's project and lets "
        "serviceAccount:<project>.svc.id.goog[custom-metrics/"
        "custom-metrics-stackdriver-adapter] act as it (roles/iam.workloadIdentityUser). "
        "The cluster's stack makes it (gcp.WorkloadIdentity, a workload with that "
        "Kubernetes ServiceAccount and projectRoles [roles/monitoring.viewer]): a Google "
        "resource here would make this Kubernetes stack a Google Cloud one.",
    )

    @field_validator("image")
    @classmethod
    def _by_digest(cls, image: str) -> str:
        problem = reference_problem(image)
        if problem:
            raise ValueError(
                f"{problem} (checklist E1). Fix: pin it, e.g. with the digest `docker buildx "
                "imagetools inspect <image>` prints."
            )
        return image


class OperatorsConfig(AistackModel):
    """What this stack installs, and where."""

    governance: Governance
    gke: bool = Field(False, description="GKE: skip what GKE manages (GKE_MANAGED).")
    eks: bool = Field(False, description="EKS with Karpenter: add Karpenter's controller.")
    skip: tuple[str, ...] = Field((), description="Operators not to install here.")
    api_server: ApiServer
    karpenter: KarpenterValues | None = None
    custom_metrics_adapter: CustomMetricsAdapter | None = None
    egress: dict[str, tuple[EgressAllow, ...]] = Field(
        {},
        description="Egress an operator's pods need beyond DNS, their namespace and the API "
        "server, by operator: e.g. KEDA's scalers' sources (the monitoring namespace's "
        "Prometheus is allowed already when this stack installs it).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> OperatorsConfig:
        problems = []
        if self.gke and self.eks:
            problems.append("gke and eks are both true. Fix: one cluster, one of them.")
        unknown = (set(self.skip) | set(self.egress)) - set(CHARTS)
        if unknown:
            problems.append(
                f"skip or egress names unknown operators {sorted(unknown)}. Fix: use "
                f"{sorted(CHARTS)}."
            )
        if self.eks and self.karpenter is None:
            problems.append(
                "eks: true installs Karpenter, which needs `karpenter`. Fix: pass the pool's "
                "helm_values() (stacks/kubernetes-eks output karpenterHelmValues)."
            )
        if (
            "custom-metrics-stackdriver-adapter" in self.installs()
            and self.custom_metrics_adapter is None
        ):
            problems.append(
                "gke: true installs the Custom Metrics Stackdriver Adapter (the GKE stacks' "
                "HPA reads custom.metrics.k8s.io), which needs `customMetricsAdapter`. Fix: "
                "give its image by digest and its Google service account, or skip "
                "custom-metrics-stackdriver-adapter if the cluster runs one already."
            )
        if problems:
            raise ValueError(" ".join(problems))
        return self

    def installs(self) -> list[str]:
        return [
            name
            for name in CHARTS
            if name not in self.skip
            and not (self.gke and name in (*GKE_MANAGED, *NOT_ON_GKE))
            and (self.eks or name not in EKS_ONLY)
            and (self.gke or name not in GKE_ONLY)
        ]


config = pulumi.Config()
karpenter = config.get_object("karpenter")
adapter = config.get_object("customMetricsAdapter")
settings = parse_all(
    {
        "operators": (
            OperatorsConfig,
            {
                "governance": {
                    "owner": config.require("owner"),
                    "costCenter": "ml-platform",
                    "environment": config.get("environment") or "dev",
                    "allowedRegions": [config.require("region")],
                },
                "gke": config.get_bool("gke") or False,
                "eks": config.get_bool("eks") or False,
                "skip": config.get_object("skip") or [],
                "apiServer": config.require_object("apiServer"),
                "egress": config.get_object("egress") or {},
                **({"karpenter": karpenter} if karpenter is not None else {}),
                **({"customMetricsAdapter": adapter} if adapter is not None else {}),
            },
        )
    }
)["operators"]
installs = settings.installs()
labels = labels_for(settings.governance, workload="operators")


def namespace(key: str, *, privileged: str | None = None) -> kubernetes.core.v1.Namespace:
    """The operator's namespace: Pod Security pinned, no GPUs and no load balancers, and
    traffic denied but for the ports it serves, DNS, its own pods and the API server."""
    name = CHARTS[key]["namespace"]
    level = "privileged" if privileged else "restricted"
    pss = {
        f"pod-security.kubernetes.io/{mode}{suffix}": value
        for mode in ("enforce", "audit", "warn")
        for suffix, value in (("", level), ("-version", f"v{OLDEST_KUBERNETES}"))
    }
    # A chart that installs its images by tag: out of k8s.ImagePolicy's reach, with why.
    exempt, exempt_because = (
        image_policy_exemption(TAG_ONLY_IMAGES[key]) if key in TAG_ONLY_IMAGES else ({}, {})
    )
    ns = kubernetes.core.v1.Namespace(
        f"{key}-namespace",
        metadata={
            "name": name,
            "labels": {**labels, **pss, **exempt},
            # Governance as on every aistack namespace: owner, regions, third parties (G6).
            "annotations": {
                **annotations_for(settings.governance),
                **({"aistack.dev/privileged-because": privileged} if privileged else {}),
                **exempt_because,
            },
        },
    )
    opts = pulumi.ResourceOptions(parent=ns)
    meta = {"namespace": ns.metadata["name"], "labels": labels}
    # Operators need no GPU and no cloud load balancer: a quota of 0 keeps the namespace
    # from being where either is spent (AIS-C3-07).
    kubernetes.core.v1.ResourceQuota(
        f"{key}-quota",
        metadata={**meta, "name": "aistack-quota"},
        spec={"hard": {"requests.nvidia.com/gpu": "0", "services.loadbalancers": "0"}},
        opts=opts,
    )
    kubernetes.networking.v1.NetworkPolicy(
        f"{key}-default-deny",
        metadata={**meta, "name": "default-deny"},
        spec={"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
        opts=opts,
    )
    egress: list[dict[str, Any]] = [
        # CoreDNS/kube-dns pods carry k8s-app: kube-dns on GKE, EKS, kubeadm and kind.
        {
            "to": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                    },
                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                }
            ],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
        },
        {
            "to": [{"ipBlock": {"cidr": cidr}} for cidr in settings.api_server.cidrs],
            "ports": [{"protocol": "TCP", "port": settings.api_server.port}],
        },
        {"to": [{"podSelector": {}}]},  # its own pods (KEDA's metrics server to operator)
    ]
    purposes = ["DNS", "the API server", "its own pods"]
    if key == "custom-metrics-stackdriver-adapter":
        # Its Google credentials and the cluster's project, location and name, from the GKE
        # metadata server (Workload Identity; the adapter's pkg/config/gce_config.go reads
        # project, cluster-location and cluster-name there).
        endpoints = IDENTITY_ENDPOINTS["gke-workload-identity"]
        egress.extend(
            {"to": [{"ipBlock": {"cidr": cidr}}], "ports": [{"protocol": "TCP", "port": port}]}
            for cidr, port in endpoints
        )
        purposes.append("the GKE metadata server (Workload Identity)")
    if key == "keda" and "kube-prometheus-stack" in installs:
        # The prometheus scaler queries Prometheus (the operator's Service, port 9090).
        monitoring_ns = CHARTS["kube-prometheus-stack"]["namespace"]
        egress.append(
            {
                "to": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {"kubernetes.io/metadata.name": monitoring_ns}
                        }
                    }
                ],
                "ports": [{"protocol": "TCP", "port": 9090}],
            }
        )
        purposes.append("Prometheus (the prometheus scaler)")
    for allow in settings.egress.get(key, ()):
        block: dict[str, Any] = {"cidr": allow.cidr}
        if allow.except_cidrs:
            block["except"] = list(allow.except_cidrs)
        egress.append(
            {
                "to": [{"ipBlock": block}],
                "ports": [{"protocol": "TCP", "port": port} for port in allow.ports],
            }
        )
        purposes.append(allow.purpose)
    if key == "kube-prometheus-stack":
        # Prometheus scrapes targets in every namespace and the kubelets on every node, and
        # Alertmanager reaches its receivers: the monitoring namespace's egress is open.
        egress, purposes = [{}], ["anywhere: scrape targets, kubelets, alert receivers"]
    kubernetes.networking.v1.NetworkPolicy(
        f"{key}-allow",
        metadata={
            **meta,
            "name": "operator",
            "annotations": {"aistack.dev/egress-purposes": "; ".join(purposes)},
        },
        spec={
            "podSelector": {},
            "policyTypes": ["Ingress", "Egress"],
            # The API server's source address is not a pod, so the served ports are open to
            # any source; nothing else is.
            "ingress": [
                {"ports": [{"protocol": "TCP", "port": port} for port in SERVED_PORTS[key]]},
                {"from": [{"podSelector": {}}]},
            ],
            "egress": egress,
        },
        opts=opts,
    )
    return ns


def release(
    key: str, values: dict[str, Any], ns: Any = None, *, in_namespace: str = "", **extra: Any
) -> Any:
    spec = CHARTS[key]
    return kubernetes.helm.v3.Release(
        key,
        name=key,
        chart=spec["chart"],
        version=spec["version"],  # exact: never a range, never the repository's latest
        repository_opts={"repo": spec["repo"]} if "repo" in spec else None,
        namespace=ns.metadata["name"] if ns is not None else in_namespace or spec["namespace"],
        values=values,
        # A failed install or upgrade rolls back instead of leaving a half-installed
        # operator whose webhooks refuse every Job.
        atomic=True,
        cleanup_on_fail=True,
        max_history=10,
        description=f"aistack: {key} {spec['release']}",
        **extra,
    )


#: How Kueue's metrics are scraped: kueue v0.19.2 serves them on 8443 over HTTPS behind
#: authentication and authorization (cmd/kueue/main.go:188-192, `SecureServing: true`,
#: `filters.WithAuthenticationAndAuthorization`: a TokenReview of the scraper's bearer
#: token, then a SubjectAccessReview for `get` on the non-resource URL /metrics), from a
#: self-signed certificate unless cert-manager is on (the chart's own ServiceMonitor
#: skips verification: charts/kueue/values.yaml:365-371). The metrics Service is
#: `kueue-controller-manager-metrics-service`, port `https` (values.yaml:209-215,
#: templates/manager/auth_proxy_service.yaml), labelled as templates/_helpers.tpl:52-76
#: says (release and chart both `kueue`); the manager pod's port is `metrics`
#: (templates/manager/manager.yaml:79-81). k8s.GpuMonitoring's queue alerts read
#: kueue_admission_wait_time_seconds, kueue_pending_workloads and
#: kueue_admitted_workloads_total: without this scrape they never fire.
KUEUE_METRICS_SERVICE_LABELS = {
    "app.kubernetes.io/name": "kueue",
    "app.kubernetes.io/instance": "kueue",
    "app.kubernetes.io/component": "metrics-service",
}
KUEUE_MANAGER_POD_LABELS = {
    "app.kubernetes.io/name": "kueue",
    "control-plane": "controller-manager",
}
#: Kueue's ServiceMonitor for kube-prometheus-stack, given to that chart as
#: `prometheus.additionalServiceMonitors` (kube-prometheus-stack-88.3.0 values.yaml:5103,
#: templates/prometheus/servicemonitors.yaml): the chart labels it `release:
#: kube-prometheus-stack` (servicemonitors.yaml:11-13, _helpers.tpl:76-87), which its
#: Prometheus selects (values.yaml:4476 serviceMonitorSelectorNilUsesHelmValues), and it
#: installs after the prometheus-operator CRDs (that release's depends_on). Prometheus
#: authenticates with its own ServiceAccount token (the endpoint as Kueue's chart writes it,
#: templates/prometheus/monitor.yaml:31-37; `bearerTokenFile` is allowed, the chart leaves
#: arbitraryFSAccessThroughSMs off: values.yaml:4896); its ClusterRole already grants `get`
#: on /metrics (templates/prometheus/clusterrole.yaml:30-41).
KUEUE_SERVICE_MONITOR = {
    "name": "kueue",
    "namespaceSelector": {"matchNames": [CHARTS["kueue"]["namespace"]]},
    "selector": {"matchLabels": KUEUE_METRICS_SERVICE_LABELS},
    "endpoints": [
        {
            "port": "https",
            "scheme": "https",
            "path": "/metrics",
            "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
            "tlsConfig": {"insecureSkipVerify": True},
        }
    ],
}


def kueue_metrics_on_gke(ns: kubernetes.core.v1.Namespace) -> None:
    """Kueue's scrape by Google Cloud Managed Service for Prometheus: a PodMonitoring in
    kueue-system with TLS and a bearer token. GMP takes a token only from a Secret
    (PodMonitoring v1 `authorization.credentials.secret`, prometheus-engine v0.17.2 CRD kept
    under aistack/scan/data/crds), which the managed collector (ServiceAccount `collector`
    in gmp-system) must be let read: prometheus-engine v0.17.2 examples/instrumentation/
    go-synthetic/go-synthetic-basic-auth.yaml:86-109 (a Role on the one Secret, bound to
    gmp-system/collector) and examples/inference-optimized-gateway/secret.yaml:15-52 (a
    ServiceAccount whose token Secret holds the bearer token, allowed `get` on /metrics)."""
    name = CHARTS["kueue"]["namespace"]
    opts = pulumi.ResourceOptions(parent=ns)
    meta = {"namespace": ns.metadata["name"], "labels": labels}
    reader, token = "kueue-metrics-reader", "kueue-metrics-reader-token"
    account = kubernetes.core.v1.ServiceAccount(
        "kueue-metrics-reader",
        metadata={**meta, "name": reader},
        # No pod runs as it: it only owns the token the collector presents.
        automount_service_account_token=False,
        opts=opts,
    )
    # The token controller fills a Secret of this type with the account's token (Kubernetes
    # docs, "Manually create a long-lived API token for a ServiceAccount").
    kubernetes.core.v1.Secret(
        "kueue-metrics-reader-token",
        metadata={
            **meta,
            "name": token,
            "annotations": {"kubernetes.io/service-account.name": reader},
        },
        type="kubernetes.io/service-account-token",
        opts=pulumi.ResourceOptions(parent=ns, depends_on=[account]),
    )
    role = kubernetes.rbac.v1.ClusterRole(
        "kueue-metrics-reader",
        metadata={"name": "aistack-kueue-metrics-reader", "labels": labels},
        rules=[{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        opts=opts,
    )
    kubernetes.rbac.v1.ClusterRoleBinding(
        "kueue-metrics-reader",
        metadata={"name": "aistack-kueue-metrics-reader", "labels": labels},
        role_ref={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "aistack-kueue-metrics-reader",
        },
        subjects=[{"kind": "ServiceAccount", "name": reader, "namespace": name}],
        opts=pulumi.ResourceOptions(parent=ns, depends_on=[role]),
    )
    secret_reader = kubernetes.rbac.v1.Role(
        "kueue-metrics-token-collector",
        metadata={**meta, "name": "gmp-collector-kueue-metrics-token"},
        rules=[
            {
                "apiGroups": [""],
                "resources": ["secrets"],
                "resourceNames": [token],
                "verbs": ["get", "list", "watch"],
            }
        ],
        opts=opts,
    )
    kubernetes.rbac.v1.RoleBinding(
        "kueue-metrics-token-collector",
        metadata={**meta, "name": "gmp-collector-kueue-metrics-token"},
        role_ref={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "gmp-collector-kueue-metrics-token",
        },
        subjects=[{"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}],
        opts=pulumi.ResourceOptions(parent=ns, depends_on=[secret_reader]),
    )
    # The PodMonitoring CRD is GKE's, installed with managed Prometheus (gcp.GkeCluster),
    # so it exists before this stack runs.
    kubernetes.apiextensions.CustomResource(
        "kueue-pod-monitoring",
        api_version="monitoring.googleapis.com/v1",
        kind="PodMonitoring",
        metadata={**meta, "name": "kueue"},
        spec={
            "selector": {"matchLabels": KUEUE_MANAGER_POD_LABELS},
            "endpoints": [
                {
                    "port": "metrics",
                    "scheme": "https",
                    "path": "/metrics",
                    "interval": "30s",
                    "tls": {"insecureSkipVerify": True},
                    "authorization": {
                        "type": "Bearer",
                        "credentials": {"secret": {"name": token, "key": "token"}},
                    },
                }
            ],
        },
        opts=opts,
    )


#: Kueue's manager configuration: the chart's default (kueue v0.19.2 charts/kueue/values.yaml
#: lines 119-186, `managerConfig.controllerManagerConfigYaml`) with waitForPodsReady on. Kueue
#: admits on quota alone: a job admitted onto a flavor whose nodes cannot come (the pool at
#: its limit, no capacity for the type) holds that quota with its pods Pending, for ever.
#: With waitForPodsReady a workload whose pods are not all Ready within `timeout` is
#: evicted and requeued with backoff, and the quota goes to work that can run
#: (Kueue docs, "Setup All-or-nothing with ready Pods"). The timeout covers a GPU node's
#: launch, its driver and a multi-GB image pull.
#: v1beta2 has no `enable`: the block's presence turns it on, and Kueue decodes its
#: configuration strictly (pkg/config/config.go:61, serializer.EnableStrict), so the
#: fields are those of apis/config/v1beta2/configuration_types.go:302-329.
KUEUE_WAIT_FOR_PODS_READY = {
    "timeout": "30m",
    "recoveryTimeout": "10m",
    "blockAdmission": False,
    "requeuingStrategy": {
        "timestamp": "Eviction",
        "backoffBaseSeconds": 60,
        "backoffMaxSeconds": 3600,
    },
}


def kueue_manager_config() -> str:
    """The chart's default Configuration, with KUEUE_WAIT_FOR_PODS_READY and only the
    integrations aistack uses, in training namespaces (Helm replaces the whole string, so
    every default kept is restated)."""
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        "waitForPodsReady": KUEUE_WAIT_FOR_PODS_READY,
        # Only what aistack's templates submit (Jobs and JobSets), and only in training
        # namespaces: Kueue's chart turns each listed framework's webhook to failurePolicy
        # Fail (charts/kueue/templates/webhook/manifests.yaml:91-96 deployments, :314-319
        # pods), and scopes every Job webhook to managedJobsNamespaceSelector (:159-170).
        # With the chart's defaults a Kueue that is down, not yet serving or unreachable
        # refused every Pod and Deployment in the cluster, the operators' and serving's.
        "managedJobsNamespaceSelector": {"matchLabels": {TIER_LABEL: "train"}},
        "integrations": {"frameworks": ["batch/job", "jobset.x-k8s.io/jobset"]},
    }
    return yaml.safe_dump(config, sort_keys=False)


releases: dict[str, Any] = {}
if "kueue" in installs:
    # The chart's defaults are restricted-compliant (runAsNonRoot, RuntimeDefault seccomp,
    # no privilege escalation, all capabilities dropped, read-only root) with requests
    # (500m, 512Mi), and its ClusterRoles are the manager's own.
    kueue_ns = namespace("kueue")
    releases["kueue"] = release(
        "kueue",
        # Not the chart's own ServiceMonitor: it carries the chart's labels only, never the
        # `release: kube-prometheus-stack` the Prometheus selects, and its RoleBinding names
        # kube-prometheus' prometheus-k8s account, not kube-prometheus-stack's (kueue
        # v0.19.2 charts/kueue/templates/prometheus/monitor.yaml:19-37, role.yaml:64-83).
        # The scrape is KUEUE_SERVICE_MONITOR (kube-prometheus-stack, below) or, on GKE,
        # kueue_metrics_on_gke.
        {
            "enablePrometheus": False,
            "enableKueueViz": False,
            "managerConfig": {"controllerManagerConfigYaml": kueue_manager_config()},
        },
        kueue_ns,
    )
    if settings.gke:
        kueue_metrics_on_gke(kueue_ns)
if "jobset" in installs:
    releases["jobset"] = release("jobset", {"prometheus": {"enable": False}}, namespace("jobset"))
if "keda" in installs:
    releases["keda"] = release(
        "keda",
        {
            # The chart's default grants KEDA get/update on the scale subresource of every
            # resource in every API group (`scaledRefKinds: apiGroup "*"`); Deployments and
            # StatefulSets, all aistack scales, need none of that (keda/values.yaml
            # rbac.enabledCustomScaledRefKinds).
            "rbac": {"enabledCustomScaledRefKinds": False},
            # The chart's default lets the operator list and watch every Secret in every
            # namespace (kedacore/charts v2.20.2 keda/templates/manager/clusterrole.yaml:
            # 51-58, `if not .Values.permissions.operator.restrict.secret`), and `list`
            # returns their data. Restricted, both read Secrets in the keda namespace only
            # (values.yaml:913-922; minimal-rbac.yaml:36-65 grants them there, and
            # manager/deployment.yaml:180-183, metrics-server/deployment.yaml:120-123 set
            # KEDA_RESTRICT_SECRET_ACCESS). aistack's prometheus triggers use no
            # TriggerAuthentication, so they read no Secret at all.
            "permissions": {
                "operator": {"restrict": {"secret": True}},
                "metricServer": {"restrict": {"secret": True}},
            },
            "image": {"pullPolicy": "IfNotPresent"},
        },
        namespace("keda"),
    )
if "kube-prometheus-stack" in installs:
    monitoring = namespace("kube-prometheus-stack")
    crds = []
    if "prometheus-operator-crds" in installs:
        crds = [release("prometheus-operator-crds", {}, monitoring)]
        releases["prometheus-operator-crds"] = crds[0]
    off = {"enabled": False}
    releases["kube-prometheus-stack"] = release(
        "kube-prometheus-stack",
        {
            # The CRDs are the release above, which upgrades them with the operator.
            "crds": {"enabled": not crds},
            # node-exporter runs with the host's network and PID namespaces and its root
            # filesystem (not admissible under restricted); GPU metrics come from DCGM.
            "nodeExporter": off,
            # No dashboard: alerts go to Alertmanager, and Grafana is another login to secure.
            "grafana": off,
            # Managed control planes (GKE, EKS) do not expose these: their targets would be
            # down and their alerts would fire forever.
            "kubeEtcd": off,
            "kubeControllerManager": off,
            "kubeScheduler": off,
            "kubeProxy": off,
            "prometheus": {
                "prometheusSpec": {
                    "retention": "15d",
                    "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}},
                },
                # Kueue's metrics, which the queue alerts read (KUEUE_SERVICE_MONITOR).
                **(
                    {"additionalServiceMonitors": [KUEUE_SERVICE_MONITOR]}
                    if "kueue" in installs
                    else {}
                ),
            },
            "alertmanager": {
                "alertmanagerSpec": {"resources": {"requests": {"cpu": "50m", "memory": "128Mi"}}}
            },
            "prometheusOperator": {"resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}},
        },
        monitoring,
        opts=pulumi.ResourceOptions(depends_on=crds),
    )
if "dcgm-exporter" in installs:
    releases["dcgm-exporter"] = release(
        "dcgm-exporter",
        {
            # k8s.GpuMonitoring creates the ServiceMonitor (EXPORTERS["dcgm-exporter-chart"]).
            "serviceMonitor": {"enabled": False},
            # On the GPU nodes aistack's pools make (every pool labels aistack.dev/pool),
            # through their GPU taint.
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "aistack.dev/pool", "operator": "Exists"}
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
        },
        namespace(
            "dcgm-exporter",
            # deployment/values.yaml and templates/daemonset.yaml at 4.5.3-4.8.2: root with
            # SYS_ADMIN (profiling metrics) and a hostPath mount of the kubelet's
            # pod-resources socket (which pod holds which GPU): baseline forbids both.
            privileged="dcgm-exporter reads the kubelet pod-resources socket (hostPath) as "
            "root with SYS_ADMIN; nothing else runs here",
        ),
    )
if "nvidia-device-plugin" in installs:
    # kube-system, as NVIDIA's own manifest installs it (deployments/static/
    # nvidia-device-plugin.yml): a device plugin is a node add-on that mounts the kubelet's
    # device-plugins directory (hostPath), the kind of privileged add-on Kubernetes' own
    # namespace holds, not one to give a namespace of its own that must then be privileged.
    releases["nvidia-device-plugin"] = release(
        "nvidia-device-plugin",
        {
            # The chart's default affinity requires node-feature-discovery's labels
            # (values.yaml: feature.node.kubernetes.io/pci-10de.present, nvidia.com/gpu.
            # present), which nodes get only when NFD runs (off unless gfd is on): aistack's
            # GPU pools label their nodes aistack.dev/pool instead. Its tolerations already
            # accept the nvidia.com/gpu taint.
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "aistack.dev/pool", "operator": "Exists"}
                                ]
                            }
                        ]
                    }
                }
            },
        },
    )
if "gateway-api" in installs:
    # The CRDs of the standard channel, applied from the release's pinned URL. Offline
    # nothing reads the URL: the component is recorded with it, and no CRD objects.
    releases["gateway-api"] = kubernetes.yaml.v2.ConfigFile(
        "gateway-api", file=CHARTS["gateway-api"]["manifest"]
    )


def custom_metrics_adapter(spec: CustomMetricsAdapter) -> None:
    """The Custom Metrics Stackdriver Adapter, as its upstream manifest installs it
    (CHARTS["custom-metrics-stackdriver-adapter"]["rendered_from"], cited by line below), but
    for these changes: the image by digest from the config; Pod Security restricted (the
    manifest sets no securityContext and its image, FROM gcr.io/distroless/static, runs as
    root: Dockerfile:21), so as nobody (65534) with a read-only root, its self-signed serving
    certificate in an emptyDir (`--cert-dir`) and its secure port moved off 443, which a
    non-root process may not bind (`--secure-port=6443`; both flags are k8s.io/apiserver's
    SecureServingOptions, which the adapter takes through sigs.k8s.io/custom-metrics-
    apiserver v1.35.0 pkg/cmd/options/options.go:37-52,79-86); and only the custom metrics
    API: `--enable-external-metrics-api=false` (adapter.go:250), so neither the
    `v1beta1.external.metrics.k8s.io` APIService (lines 171-183) nor the HPA's
    external-metrics-reader grant (185-210) is installed: aistack's HPA reads a Pods metric,
    and the external API is the one KEDA registers too. Its Google identity: the service
    account with roles/monitoring.viewer that `gcpServiceAccount` names and the Kubernetes
    ServiceAccount acts as (k8s-stackdriver custom-metrics-stackdriver-adapter/README.md:
    70-91, "If you use Workload Identity"), made by the cluster's stack. Also added: a
    liveness probe, and the namespace's default-deny NetworkPolicies (the API server may
    call 6443; it may call DNS, the API server, the GKE metadata server and, per `egress`,
    Cloud Monitoring)."""
    key = "custom-metrics-stackdriver-adapter"
    ns_name, account_name = CHARTS[key]["namespace"], "custom-metrics-stackdriver-adapter"
    ns = namespace(key)
    opts = pulumi.ResourceOptions(parent=ns)
    meta = {"namespace": ns.metadata["name"], "labels": labels}
    # ---- Kubernetes: lines 6-66, the account and its grants ----
    subject = [{"kind": "ServiceAccount", "name": account_name, "namespace": ns_name}]
    kubernetes.core.v1.ServiceAccount(
        "custom-metrics-adapter",
        metadata={
            **meta,
            "name": account_name,
            "annotations": {
                # Workload Identity: the Google account it acts as (README.md:85-91).
                "iam.gke.io/gcp-service-account": spec.gcp_service_account,
                # An aggregated API server: it reviews every caller's token and reads pods.
                NEEDS_API_TOKEN_ANNOTATION: "true",
            },
        },
        opts=opts,
    )
    kubernetes.rbac.v1.ClusterRoleBinding(
        "custom-metrics-auth-delegator",
        metadata={"name": "custom-metrics-auth-delegator", "labels": labels},
        role_ref={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
        subjects=subject,
        opts=opts,
    )
    # kube-system holds the extension-apiserver-authentication ConfigMap an aggregated API
    # server reads the client CA from; Kubernetes' own Role there grants it.
    kubernetes.rbac.v1.RoleBinding(
        "custom-metrics-auth-reader",
        metadata={
            "name": "custom-metrics-auth-reader",
            "namespace": "kube-system",
            "labels": labels,
        },
        role_ref={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "extension-apiserver-authentication-reader",
        },
        subjects=subject,
        opts=opts,
    )
    reader = kubernetes.rbac.v1.ClusterRole(
        "custom-metrics-resource-reader",
        metadata={"name": "custom-metrics-resource-reader", "labels": labels},
        rules=[
            {
                "apiGroups": [""],
                "resources": ["pods", "nodes", "nodes/stats"],
                "verbs": ["get", "list", "watch"],
            }
        ],
        opts=opts,
    )
    kubernetes.rbac.v1.ClusterRoleBinding(
        "custom-metrics-resource-reader",
        metadata={"name": "custom-metrics-resource-reader", "labels": labels},
        role_ref={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "custom-metrics-resource-reader",
        },
        subjects=subject,
        opts=pulumi.ResourceOptions(parent=ns, depends_on=[reader]),
    )
    # ---- lines 68-141: the server ----
    selector = {"run": account_name, "k8s-app": account_name}
    deployment = kubernetes.apps.v1.Deployment(
        "custom-metrics-adapter",
        metadata={**meta, "name": account_name, "labels": {**labels, **selector}},
        spec={
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": {**selector, "kubernetes.io/cluster-service": "true"}},
                "spec": {
                    "serviceAccountName": account_name,
                    # The adapter is an aggregated API server: it calls the API server to
                    # authenticate and authorize every request, so it needs its token. It
                    # is mounted explicitly, as the kubelet's automount would (Kubernetes
                    # docs, "Managing Service Accounts": the kube-api-access projected
                    # volume), so no other container could get one by default.
                    "automountServiceAccountToken": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "runAsGroup": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    # Upstream's (lines 90-98): it may run on GPU and TPU nodes.
                    "tolerations": [
                        {
                            "key": "nvidia.com/gpu",
                            "operator": "Equal",
                            "value": "present",
                            "effect": "NoSchedule",
                        },
                        {
                            "key": "cloud.google.com/gke-tpu",
                            "operator": "Equal",
                            "value": "present",
                            "effect": "NoSchedule",
                        },
                    ],
                    "containers": [
                        {
                            "name": "pod-custom-metrics-stackdriver-adapter",
                            "image": spec.image,
                            "imagePullPolicy": "IfNotPresent",
                            "command": [
                                "/adapter",
                                "--use-new-resource-model=true",
                                "--fallback-for-container-metrics=true",
                                "--enable-external-metrics-api=false",
                                "--secure-port=6443",
                                "--cert-dir=/var/run/serving-cert",
                            ],
                            "ports": [{"name": "https", "containerPort": 6443, "protocol": "TCP"}],
                            "resources": {
                                "limits": {"cpu": "250m", "memory": "200Mi"},
                                "requests": {"cpu": "250m", "memory": "200Mi"},
                            },
                            "readinessProbe": {
                                "httpGet": {"path": "/healthz", "port": 6443, "scheme": "HTTPS"},
                                "initialDelaySeconds": 40,
                                "periodSeconds": 10,
                                "timeoutSeconds": 5,
                            },
                            # Not upstream's: restarts an adapter whose server hangs (the
                            # HPA would hold the service at its replicas meanwhile); after
                            # the readiness delay, three misses 20 s apart.
                            "livenessProbe": {
                                "httpGet": {"path": "/healthz", "port": 6443, "scheme": "HTTPS"},
                                "initialDelaySeconds": 60,
                                "periodSeconds": 20,
                                "timeoutSeconds": 5,
                                "failureThreshold": 3,
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [
                                {"name": "serving-cert", "mountPath": "/var/run/serving-cert"},
                                {
                                    "name": "kube-api-access",
                                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                    "readOnly": True,
                                },
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "serving-cert", "emptyDir": {"sizeLimit": "16Mi"}},
                        {
                            "name": "kube-api-access",
                            "projected": {
                                "sources": [
                                    {
                                        "serviceAccountToken": {
                                            "expirationSeconds": 3607,
                                            "path": "token",
                                        }
                                    },
                                    {
                                        "configMap": {
                                            "name": "kube-root-ca.crt",
                                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                        }
                                    },
                                    {
                                        "downwardAPI": {
                                            "items": [
                                                {
                                                    "path": "namespace",
                                                    "fieldRef": {
                                                        "apiVersion": "v1",
                                                        "fieldPath": "metadata.namespace",
                                                    },
                                                }
                                            ]
                                        }
                                    },
                                ]
                            },
                        },
                    ],
                },
            },
        },
        opts=opts,
    )
    service = kubernetes.core.v1.Service(
        "custom-metrics-adapter",
        metadata={**meta, "name": account_name, "labels": {**labels, **selector}},
        spec={
            "type": "ClusterIP",
            "selector": selector,
            "ports": [{"port": 443, "protocol": "TCP", "targetPort": 6443}],
        },
        opts=opts,
    )
    # Lines 143-169. insecureSkipTLSVerify as upstream: the adapter serves a self-signed
    # certificate it makes at start, so there is no CA to pin.
    for version, priority in (("v1beta1", 100), ("v1beta2", 200)):
        kubernetes.apiregistration.v1.APIService(
            f"custom-metrics-{version}",
            metadata={"name": f"{version}.custom.metrics.k8s.io", "labels": labels},
            spec={
                "insecureSkipTLSVerify": True,
                "group": "custom.metrics.k8s.io",
                "groupPriorityMinimum": 100,
                "versionPriority": priority,
                "service": {"name": account_name, "namespace": ns_name},
                "version": version,
            },
            opts=pulumi.ResourceOptions(parent=ns, depends_on=[deployment, service]),
        )


if "custom-metrics-stackdriver-adapter" in installs:
    assert settings.custom_metrics_adapter is not None
    custom_metrics_adapter(settings.custom_metrics_adapter)
if "karpenter" in installs:
    assert settings.karpenter is not None
    values = settings.karpenter
    karpenter_crds = []
    if "karpenter-crd" in installs:
        karpenter_crds = [release("karpenter-crd", {}, in_namespace=values.namespace)]
        releases["karpenter-crd"] = karpenter_crds[0]
    releases["karpenter"] = release(
        "karpenter",
        {
            "settings": values.settings,
            "serviceAccount": values.service_account,
            # The getting-started install's requests and limits (karpenter-provider-aws
            # v1.14.1 getting-started step08-apply-helm-chart.sh).
            "controller": {
                "resources": {
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "limits": {"cpu": "1", "memory": "1Gi"},
                }
            },
        },
        # kube-system, where the pool's helm_values() and its controller role expect it
        # (Kubernetes owns that namespace; this stack does not create or label it).
        in_namespace=values.namespace,
        # The CRDs are karpenter-crd's; the chart's crds/ copy would only ever be installed.
        skip_crds=bool(karpenter_crds),
        opts=pulumi.ResourceOptions(depends_on=karpenter_crds),
    )

pulumi.export(
    "installed",
    {key: CHARTS[key].get("version") or CHARTS[key]["release"] for key in installs},
)
pulumi.export(
    "namespaces", {key: CHARTS[key]["namespace"] for key in installs if "namespace" in CHARTS[key]}
)
