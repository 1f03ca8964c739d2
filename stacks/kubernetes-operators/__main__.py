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
plugin with its managed driver); `eks: true` adds Karpenter. The device plugin and
Karpenter go to kube-system, where their installers put them (below).

    aistack preview stacks/kubernetes-operators      # offline: no chart is fetched
    cd stacks/kubernetes-operators && pulumi up -s dev   # for real (or -s gke, -s eks)
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes
from pydantic import Field, field_validator, model_validator

from aistack.config import AistackModel, Governance, parse_all
from aistack.contracts.k8s import OLDEST_KUBERNETES
from aistack.k8s import EgressAllow, annotations_for, labels_for

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

#: The ports each operator's pods serve to callers outside their namespace, from the
#: charts at the pinned tags: the API server calls webhooks and aggregated APIs, Prometheus
#: scrapes metrics. Kueue charts/kueue/templates/manager/manager.yaml (8082 visibility
#: APIService, 9443 webhook, 8443 metrics); JobSet charts/jobset/templates/controller/
#: deployment.yaml (9443, 8443); KEDA keda/values.yaml (service.portHttpsTarget 6443 for
#: the external-metrics APIService, webhooks 9443, operator metrics 8080);
#: kube-prometheus-stack values.yaml (prometheusOperator tls.internalPort 10250 for its
#: admission webhook; Prometheus 9090 and Alertmanager 9093, the operator's defaults);
#: dcgm-exporter values.yaml (service.port 9400).
SERVED_PORTS: dict[str, tuple[int, ...]] = {
    "kueue": (8082, 9443, 8443),
    "jobset": (9443, 8443),
    "keda": (6443, 9443, 8080),
    "kube-prometheus-stack": (10250, 9090, 9093),
    "dcgm-exporter": (9400,),
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


class OperatorsConfig(AistackModel):
    """What this stack installs, and where."""

    governance: Governance
    gke: bool = Field(False, description="GKE: skip what GKE manages (GKE_MANAGED).")
    eks: bool = Field(False, description="EKS with Karpenter: add Karpenter's controller.")
    skip: tuple[str, ...] = Field((), description="Operators not to install here.")
    api_server: ApiServer
    karpenter: KarpenterValues | None = None
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
        if problems:
            raise ValueError(" ".join(problems))
        return self

    def installs(self) -> list[str]:
        return [
            name
            for name in CHARTS
            if name not in self.skip
            and not (self.gke and name in GKE_MANAGED)
            and (self.eks or name not in EKS_ONLY)
        ]


config = pulumi.Config()
karpenter = config.get_object("karpenter")
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
    ns = kubernetes.core.v1.Namespace(
        f"{key}-namespace",
        metadata={
            "name": name,
            "labels": {**labels, **pss},
            # Governance as on every aistack namespace: owner, regions, third parties (G6).
            "annotations": {
                **annotations_for(settings.governance),
                **({"aistack.dev/privileged-because": privileged} if privileged else {}),
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


releases: dict[str, Any] = {}
if "kueue" in installs:
    # The chart's defaults are restricted-compliant (runAsNonRoot, RuntimeDefault seccomp,
    # no privilege escalation, all capabilities dropped, read-only root) with requests
    # (500m, 512Mi), and its ClusterRoles are the manager's own.
    releases["kueue"] = release(
        "kueue",
        # No ServiceMonitor from the chart: the Prometheus Operator's CRD may not exist yet
        # when this release installs (k8s.GpuMonitoring scrapes what it needs).
        {"enablePrometheus": False, "enableKueueViz": False},
        namespace("kueue"),
    )
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
                }
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
