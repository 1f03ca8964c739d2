"""The Kubernetes vocabulary aistack writes and reads: label keys and values, the supported
versions, Kueue's group and cap, serving limits and quantities.

Components write these (k8s.*, and aws.KarpenterGpuPool's NodePools); queries, rules, cost
and `aistack scan` read them. No pulumi or pulumi_kubernetes here, so the readers never load
an SDK to know a label.

Kubernetes labels are selectors, not free text: a key is an optional DNS-subdomain prefix
(at most 253 characters) and a name of at most 63 of `[A-Za-z0-9._-]`, starting and ending
alphanumeric; a value the same, at most 63 (apimachinery IsQualifiedName,
IsValidLabelValue; the simulated API server refuses anything else, as the real one does).
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Decimal, InvalidOperation

from aistack.config import ALLOWED_REGIONS_TAG, STACK_TAG, WORKLOAD_TAG, Governance

__all__ = [
    "CAPACITY_LABEL",
    "DCGM_SCRAPE_ANNOTATION",
    "ENFORCES_LABEL",
    "EPHEMERAL_STORAGE",
    "GATEWAY_CLASS_ANNOTATION",
    "GATEWAY_CONF_DIR",
    "KUEUE_GROUP",
    "LABEL_PREFIX",
    "MANAGED_LABEL",
    "MAX_QUEUE_GPUS",
    "MAX_REPLICAS",
    "MODEL_NAME_LABEL",
    "MODEL_VERSION_LABEL",
    "NEEDS_API_TOKEN_ANNOTATION",
    "NEWEST_KUBERNETES",
    "OLDEST_KUBERNETES",
    "POOL_LABEL",
    "PRIVILEGED_BECAUSE_ANNOTATION",
    "REGION_ANNOTATION",
    "REQUEST_LOGGING_ANNOTATION",
    "SUPPORTED_KUBERNETES",
    "THIRD_PARTY_ANNOTATION",
    "TIER_LABEL",
    "label_key",
    "label_value",
    "labels_for",
    "parse_quantity",
    "stack_label",
]

# ---- versions ---------------------------------------------------------------------------

#: The Kubernetes minor versions aistack supports and validates its objects against
#: (tests/k8s/test_schemas.py, kubernetes-validate --strict): 1.30 is the oldest minor
#: still in provider support on EKS and GKE when this was written, and the first with
#: ValidatingAdmissionPolicy GA; 1.37 the newest schema kubernetes-validate 1.37 ships.
OLDEST_KUBERNETES = "1.30"
NEWEST_KUBERNETES = "1.37"
SUPPORTED_KUBERNETES = (OLDEST_KUBERNETES, NEWEST_KUBERNETES)

# ---- labels -----------------------------------------------------------------------------

#: Every aistack label and annotation key lives under this prefix (a DNS subdomain the
#: project owns: Kubernetes reserves kubernetes.io and k8s.io for itself).
LABEL_PREFIX = "aistack.dev/"
#: On every object an aistack component creates; admission policies bind to it.
MANAGED_LABEL = "aistack.dev/managed"


_NOT_LABEL_CHAR = re.compile(r"[^A-Za-z0-9._-]")
_EDGE = re.compile(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$")


def label_key(tag: str) -> str:
    """`aistack:cost-center` -> `aistack.dev/cost-center`."""
    name = tag.removeprefix("aistack:")
    return LABEL_PREFIX + label_value(name)


def label_value(text: str) -> str:
    """`text` as a valid label value: other characters become `-`, at most 63, alphanumeric
    at both ends (an empty value is valid)."""
    value = _NOT_LABEL_CHAR.sub("-", text.replace(" ", "_"))[:63]
    return _EDGE.sub("", value)


def stack_label(project: str, stack: str) -> str:
    """A stack's identity in labels (`aistack.dev/stack`): `<project>-<stack>`."""
    return label_value(f"{project}-{stack}")


def labels_for(
    governance: Governance, stack: str, workload: str | None = None, **extra: str
) -> dict[str, str]:
    """Governance as Kubernetes labels of the stack labelled `stack` (`stack_label`), plus
    `aistack.dev/managed` and `extra` (keys under `aistack.dev/`). The allowed regions,
    joined by `_`, continue in `aistack.dev/allowed-regions-2`, `-3`, ... when they do not
    fit 63 characters."""
    tags = {
        STACK_TAG: stack,
        "aistack:owner": governance.owner,
        "aistack:cost-center": governance.cost_center,
        "aistack:environment": governance.environment,
        "aistack:data-classification": governance.data_classification,
    }
    if workload:
        tags[WORKLOAD_TAG] = workload
    labels = {label_key(key): label_value(value) for key, value in tags.items()}
    chunks: list[list[str]] = [[]]
    for region in governance.allowed_regions:
        if chunks[-1] and len("_".join([*chunks[-1], region])) > 63:
            chunks.append([])
        chunks[-1].append(region)
    key = label_key(ALLOWED_REGIONS_TAG)
    for index, chunk in enumerate(chunks):
        labels[key if index == 0 else f"{key}-{index + 1}"] = "_".join(chunk)
    labels[MANAGED_LABEL] = "true"
    labels.update({LABEL_PREFIX + key: label_value(value) for key, value in extra.items()})
    return labels


#: The labels every serving pod carries (the contract with k8s.InferenceService, S7).
MODEL_NAME_LABEL = "aistack.dev/model-name"
MODEL_VERSION_LABEL = "aistack.dev/model-version"
#: k8s.TeamNamespace labels each namespace with its tier (`train` or `serve`).
TIER_LABEL = "aistack.dev/tier"
#: On each admission policy: the checklist IDs it enforces, joined by `_` (`E1_S7`).
ENFORCES_LABEL = "aistack.dev/enforces"

#: On GPU nodes and their pools (k8s.TrainingQueue's flavors select on them): the pool, and
#: its capacity type (spot or on-demand). aws.KarpenterGpuPool and gcp.GpuNodePool set them.
POOL_LABEL = "aistack.dev/pool"
CAPACITY_LABEL = "aistack.dev/capacity"
#: On a Karpenter NodePool: the region its quota is counted in (C1).
REGION_ANNOTATION = "aistack.dev/region"
#: On every object: the third-party services that see its data, as JSON (G6).
THIRD_PARTY_ANNOTATION = "aistack.dev/third-party-services"
#: On a ServiceAccount that needs its API token mounted, saying so (C6).
NEEDS_API_TOKEN_ANNOTATION = "aistack.dev/needs-api-token"
#: On a serving pod: its request logging (G2).
REQUEST_LOGGING_ANNOTATION = "aistack.dev/request-logging"
#: On a namespace allowed privileged pods: why (S1).
PRIVILEGED_BECAUSE_ANNOTATION = "aistack.dev/privileged-because"
#: On the DCGM exporter's pods: who scrapes them (C5).
DCGM_SCRAPE_ANNOTATION = "aistack.dev/dcgm-scrape"

# ---- serving ----------------------------------------------------------------------------

#: The most replicas one serving version may have; a bigger fleet is a deliberate, separate
#: decision (k8s.InferenceService refuses more; rule AIS-S3 judges any autoscaler by it).
MAX_REPLICAS = 100
#: Where k8s.InferenceService mounts the gateway sidecar's nginx.conf.
#: The node-local disk a pod asks for (emptyDirs, writable layers): job templates request
#: it, so a ClusterQueue must cover it for Kueue to admit them.
EPHEMERAL_STORAGE = "ephemeral-storage"
#: On an HTTPRoute: the gatewayClassName of the Gateway it attaches to, when the program
#: knows it (a GKE class needs a HealthCheckPolicy per backend Service).
GATEWAY_CLASS_ANNOTATION = "aistack.dev/gateway-class"
GATEWAY_CONF_DIR = "/etc/aistack-gateway"

# ---- Kueue ------------------------------------------------------------------------------

#: Kueue's API group; its objects register as `kubernetes:kueue.x-k8s.io/<version>:<Kind>`
#: whatever the version (v1beta1, v1beta2).
KUEUE_GROUP = "kueue.x-k8s.io"

#: The most GPUs one Kueue flavor's quota may hold before it is no cap at all: ai-on-gke's
#: DWS tutorial (`setup/kueue.yaml`) sets `nominalQuota: 1000000000 # "Infinite" quota`.
#: 100000 is above the largest GPU clusters announced when this was written, so a value
#: above it is a placeholder for "unlimited", not a pool's maximum.
MAX_QUEUE_GPUS = 100_000

# ---- quantities -------------------------------------------------------------------------

#: apimachinery/pkg/api/resource/quantity.go: <signedNumber><suffix>, where the suffix is a
#: binary SI (Ki Mi Gi Ti Pi Ei), a decimal SI (n u m "" k M G T P E; suffix.go) or a
#: decimal exponent (e<signedNumber> / E<signedNumber>).
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(\d+\.?\d*|\.\d+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def parse_quantity(text: str | int | float) -> Decimal:
    """A Kubernetes quantity (`"500m"`, `"16Gi"`, `"8"`, `"1e3"`) as a number; ValueError
    when the API server would refuse it."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return Decimal(str(text))
    match = _QUANTITY.fullmatch(str(text).strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(
            f"{text!r} is not a Kubernetes quantity (a number with an optional suffix: "
            "m, k, M, G, T, Ki, Mi, Gi, Ti, or an exponent like 1e3)"
        )
    try:
        number = Decimal(match["number"])
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        raise ValueError(f"{text!r} is not a Kubernetes quantity") from None
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * (Decimal(1024) ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return number * (Decimal(10) ** _DECIMAL[suffix])
    if suffix:
        return number * (Decimal(10) ** int(suffix[1:]))
    return number


_NANO = Decimal("1e-9")
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()} | {0: ""}
_BINARY_SUFFIX = {power: suffix for suffix, power in _BINARY.items()}


def canonical_quantity(text: str | int | float) -> str:
    """The quantity as the API server, or a controller decoding into resource.Quantity,
    writes it back: `"3000G"` is stored as `"3T"`, `"1024Mi"` as `"1Gi"`, `"0.5"` as
    `"500m"`. An object rendered in any other spelling differs from its live copy on the
    next `pulumi up` (apimachinery pkg/api/resource/quantity.go, CanonicalizeBytes: the
    original's format kept, a binary amount under 1Ki or with a fraction written as
    decimal, precision rounded up to nano)."""
    value = parse_quantity(text).quantize(_NANO, rounding=ROUND_UP)
    if value == 0:
        return "0"
    form = _form(text)
    if form == "binary" and abs(value) >= 1024 and value == value.to_integral():
        power = 0
        while power < max(_BINARY.values()) and value % (1024 ** (power + 1)) == 0:
            power += 1
        return f"{int(value / 1024**power)}{_BINARY_SUFFIX.get(power, '')}"
    exponent = -9
    while value % (Decimal(10) ** (exponent + 3)) == 0:
        exponent += 3
    mantissa = int(value / Decimal(10) ** exponent)
    if form == "exponent" or exponent not in _DECIMAL_SUFFIX:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"


def _form(text: str | int | float) -> str:
    """apimachinery's Format of a parsed quantity: BinarySI, DecimalExponent or DecimalSI."""
    match = _QUANTITY.fullmatch(text.strip()) if isinstance(text, str) else None
    suffix = (match["suffix"] or "") if match else ""
    if suffix in _BINARY:
        return "binary"
    return "exponent" if suffix[:1] in ("e", "E") else "decimal"


def scale_quantity(text: str, factor: int) -> str:
    """TEXT times FACTOR, canonical, in TEXT's own format (`"64Gi"` x 8 is `"512Gi"`,
    `"375G"` x 8 is `"3T"`)."""
    match = _QUANTITY.fullmatch(text.strip())
    if match is None:
        parse_quantity(text)  # raises the ValueError that names the problem
        raise AssertionError("unreachable")  # pragma: no cover
    return canonical_quantity(f"{Decimal(match['number']) * factor}{match['suffix'] or ''}")
