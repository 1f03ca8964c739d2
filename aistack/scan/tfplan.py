"""A recorded StackGraph as a Terraform plan (`terraform show -json`), so Terraform tools can
judge a Pulumi stack.

pulumi-aws and pulumi-gcp are generated from the Terraform AWS and Google providers, so
each `aws:` and `gcp:` resource is a Terraform resource under another name. AWS: the
token's module and type name give the Terraform type (with a small override table).
Google: the type comes from pulumi-gcp's own bridge metadata, shipped as
`data/gcp_terraform.json` (546 of its 1,474 types break any naming rule:
`gcp:projects/service:Service` is `google_project_service`). The Python SDK's snake_case
property names are Terraform's attribute names, and the SDK's type annotations say which
inputs are blocks (emitted as lists of objects, as Terraform's JSON plan does), which are
maps (kept as objects) and which are scalars. Where Pulumi renamed something (mostly
plural names of repeatable blocks) a table maps it back: by hand for AWS, each entry with
its reason; from the bridge metadata for Google.

An input equal to another resource's id or ARN becomes a reference in
`configuration.root_module.resources[].expressions` and is left out of `planned_values`,
as Terraform does with values known only after apply; that is what lets checkov's graph
checks follow a bucket to its encryption configuration or a role to its policies.
Component resources (`aistack:*`, a team's own components) and providers are not emitted.
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import importlib
import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aistack.engine.graph import Resource, StackGraph

__all__ = [
    "BLOCK_RENAMES",
    "TERRAFORM_PLURAL_NAMES",
    "TYPE_OVERRIDES",
    "PlanResource",
    "list_attributes",
    "terraform_address_map",
    "terraform_name",
    "terraform_type",
    "to_terraform_plan",
]

PROVIDER_NAME = "registry.terraform.io/hashicorp/aws"
GOOGLE_PROVIDER_NAME = "registry.terraform.io/hashicorp/google"

#: Pulumi provider -> (Terraform provider config key, provider source address).
PROVIDERS: dict[str, tuple[str, str]] = {
    "aws": ("aws", PROVIDER_NAME),
    "gcp": ("google", GOOGLE_PROVIDER_NAME),
}

#: pulumi-gcp's token -> Terraform type and block renames (tools/refresh_gcp_terraform_types.py
#: writes it from pulumi-gcp's bridge-metadata.json; docs/scan.md says how to refresh it).
GCP_TYPES_FILE = Path(__file__).with_name("data") / "gcp_terraform.json"

#: Pulumi module -> Terraform type prefix, where Terraform's prefix is not the module name.
MODULE_PREFIXES: dict[str, str] = {
    # The EC2 core types are un-prefixed in Terraform (aws_vpc, aws_subnet, aws_instance).
    "ec2": "",
    # Terraform names Cost Explorer resources aws_ce_* (aws_ce_anomaly_monitor).
    "costexplorer": "ce",
}

#: Tokens whose Terraform type the generic rule (prefix + snake_case name) gets wrong.
TYPE_OVERRIDES: dict[str, str] = {
    # Terraform's application/network load balancer is plain aws_lb.
    "aws:lb/loadBalancer:LoadBalancer": "aws_lb",
    "aws:alb/loadBalancer:LoadBalancer": "aws_alb",
    "aws:elb/loadBalancer:LoadBalancer": "aws_elb",
    # Terraform writes "openid" as one word.
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": "aws_iam_openid_connect_provider",
    # pulumi-aws 6 named the split S3 resources *V2; Terraform never did.
    "aws:s3/bucketV2:BucketV2": "aws_s3_bucket",
    "aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2": (
        "aws_s3_bucket_lifecycle_configuration"
    ),
    "aws:s3/bucketLoggingV2:BucketLoggingV2": "aws_s3_bucket_logging",
    "aws:s3/bucketVersioningV2:BucketVersioningV2": "aws_s3_bucket_versioning",
    "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2": (
        "aws_s3_bucket_server_side_encryption_configuration"
    ),
    "aws:s3/bucketPolicy:BucketPolicy": "aws_s3_bucket_policy",
    # The EC2 types that keep Terraform's aws_ec2_ prefix.
    "aws:ec2/capacityReservation:CapacityReservation": "aws_ec2_capacity_reservation",
    "aws:ec2/fleet:Fleet": "aws_ec2_fleet",
    "aws:ec2/tag:Tag": "aws_ec2_tag",
    # Terraform's trail is aws_cloudtrail, not aws_cloudtrail_trail.
    "aws:cloudtrail/trail:Trail": "aws_cloudtrail",
}

#: (Terraform type, attribute path as Pulumi names it) -> Terraform's block name.
#: pulumi-aws pluralises a repeatable Terraform block (`rule` -> `rules`); checkov reads
#: Terraform's name, so a check on the plural silently sees nothing (the audit's
#: CKV_AWS_136 false positive on ECR). Paths are the Python (snake_case) names, nested
#: blocks joined by dots.
BLOCK_RENAMES: dict[tuple[str, str], tuple[str, str]] = {
    # (type, pulumi path): (terraform name, why)
    ("aws_ecr_repository", "encryption_configurations"): (
        "encryption_configuration",
        "CKV_AWS_136 reads encryption_configuration[0].encryption_type",
    ),
    ("aws_cloudtrail", "advanced_event_selectors"): (
        "advanced_event_selector",
        "Terraform's repeatable block is advanced_event_selector",
    ),
    ("aws_cloudtrail", "advanced_event_selectors.field_selectors"): (
        "field_selector",
        "inside it, field_selector (CKV_AWS_67/252 read the trail's selectors)",
    ),
    ("aws_cloudtrail", "advanced_event_selectors.field_selectors.starts_withs"): (
        "starts_with",
        "Terraform's attribute is starts_with",
    ),
    ("aws_lb_listener", "default_actions"): (
        "default_action",
        "CKV_AWS_2/CKV2_AWS_20 read default_action[].type and redirect",
    ),
    ("aws_lb_listener", "default_actions.forward.target_groups"): (
        "target_group",
        "Terraform's block inside forward is target_group",
    ),
    ("aws_s3_bucket_lifecycle_configuration", "rules"): (
        "rule",
        "CKV_AWS_300 reads rule[].abort_incomplete_multipart_upload",
    ),
    ("aws_s3_bucket_lifecycle_configuration", "rules.transitions"): (
        "transition",
        "Terraform's block inside rule is transition",
    ),
    ("aws_s3_bucket_lifecycle_configuration", "rules.noncurrent_version_transitions"): (
        "noncurrent_version_transition",
        "Terraform's block inside rule is noncurrent_version_transition",
    ),
    ("aws_s3_bucket_server_side_encryption_configuration", "rules"): (
        "rule",
        "CKV_AWS_145 and the S3 encryption graph checks read rule[].apply_server_side_...",
    ),
    ("aws_iam_role", "inline_policies"): (
        "inline_policy",
        "the IAM policy checks read inline_policy[].policy on aws_iam_role",
    ),
    ("aws_autoscaling_group", "tags"): (
        "tag",
        "Terraform's ASG tag block is tag (key, value, propagate_at_launch); tags is a map",
    ),
    ("aws_autoscaling_group", "mixed_instances_policy.launch_template.overrides"): (
        "override",
        "Terraform's block is override",
    ),
    ("aws_autoscaling_group", "initial_lifecycle_hooks"): (
        "initial_lifecycle_hook",
        "Terraform's block is initial_lifecycle_hook",
    ),
    ("aws_batch_job_queue", "compute_environment_orders"): (
        "compute_environment_order",
        "Terraform's block is compute_environment_order",
    ),
    ("aws_batch_job_definition", "retry_strategy.evaluate_on_exits"): (
        "evaluate_on_exit",
        "Terraform's block is evaluate_on_exit",
    ),
    ("aws_batch_compute_environment", "compute_resources.ec2_configurations"): (
        "ec2_configuration",
        "Terraform's block is ec2_configuration",
    ),
    ("aws_cloudwatch_metric_alarm", "metric_queries"): (
        "metric_query",
        "Terraform's block is metric_query",
    ),
    ("aws_budgets_budget", "notifications"): (
        "notification",
        "Terraform's block is notification",
    ),
    ("aws_budgets_budget", "cost_filters"): ("cost_filter", "Terraform's block is cost_filter"),
    ("aws_ce_anomaly_subscription", "subscribers"): (
        "subscriber",
        "Terraform's block is subscriber",
    ),
    ("aws_wafv2_web_acl", "rules"): (
        "rule",
        "the WAF checks (CKV_AWS_192, CKV2_AWS_31 family) read rule[]",
    ),
    ("aws_wafv2_web_acl", "custom_response_bodies"): (
        "custom_response_body",
        "Terraform's block is custom_response_body",
    ),
    (
        "aws_wafv2_web_acl",
        "rules.statement.managed_rule_group_statement.rule_action_overrides",
    ): (
        "rule_action_override",
        "Terraform's block is rule_action_override",
    ),
    ("aws_wafv2_web_acl_logging_configuration", "logging_filter.filters"): (
        "filter",
        "Terraform's block inside logging_filter is filter",
    ),
    ("aws_wafv2_web_acl_logging_configuration", "logging_filter.filters.conditions"): (
        "condition",
        "Terraform's block inside filter is condition",
    ),
    ("aws_lb", "subnet_mappings"): ("subnet_mapping", "Terraform's block is subnet_mapping"),
    # Lists of strings Pulumi pluralised too.
    ("aws_autoscaling_group", "vpc_zone_identifiers"): (
        "vpc_zone_identifier",
        "Terraform's subnet list on an ASG is vpc_zone_identifier",
    ),
    ("aws_iam_openid_connect_provider", "client_id_lists"): (
        "client_id_list",
        "Terraform's attribute is client_id_list",
    ),
    ("aws_iam_openid_connect_provider", "thumbprint_lists"): (
        "thumbprint_list",
        "Terraform's attribute is thumbprint_list",
    ),
    ("aws_ce_anomaly_subscription", "monitor_arn_lists"): (
        "monitor_arn_list",
        "Terraform's attribute is monitor_arn_list",
    ),
}

#: List attributes and repeatable blocks Terraform itself names in the plural (or that
#: just end in s), so no rename applies. A test walks the example stacks' plans: any other
#: list name ending in s must be decided here or in BLOCK_RENAMES.
TERRAFORM_PLURAL_NAMES = frozenset(
    {
        # blocks
        "access_logs",  # aws_lb
        "block_device_mappings",  # aws_launch_template
        "cost_types",  # aws_budgets_budget
        "egress",  # aws_security_group, aws_default_security_group (not a plural)
        "equals",  # aws_cloudtrail advanced_event_selector field_selector (not a plural)
        "ingress",  # the same
        "network_interfaces",  # aws_launch_template
        "redacted_fields",  # aws_wafv2_web_acl_logging_configuration
        "tag_specifications",  # aws_launch_template
        # lists of strings
        "alarm_actions",  # aws_cloudwatch_metric_alarm
        "enabled_metrics",  # aws_autoscaling_group
        "hidden_app_types",  # aws_sagemaker_domain studio_web_portal_settings
        "instance_types",  # aws_batch_compute_environment compute_resources
        "log_destination_configs",  # aws_wafv2_web_acl_logging_configuration
        "match_options",  # aws_ce_anomaly_subscription dimension
        "ok_actions",  # aws_cloudwatch_metric_alarm
        "platform_capabilities",  # aws_batch_job_definition
        "route_table_ids",  # aws_vpc_endpoint
        "security_group_ids",  # aws_batch_compute_environment compute_resources
        "security_groups",  # aws_lb, aws_launch_template, aws_sagemaker_domain settings
        "subnet_ids",  # aws_sagemaker_domain
        "subnets",  # aws_lb, aws_batch_compute_environment compute_resources
        "subscriber_email_addresses",  # aws_budgets_budget notification
        "subscriber_sns_topic_arns",  # aws_budgets_budget notification
        "target_group_arns",  # aws_autoscaling_group
        "values",  # aws_budgets_budget cost_filter, aws_ce_anomaly_subscription dimension
    }
)

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """`assumeRolePolicy` -> `assume_role_policy`, `BucketV2` -> `bucket_v2`."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


@functools.cache
def gcp_types() -> dict[str, Any]:
    """The shipped pulumi-gcp mapping (loaded on first use: AWS-only scans never read it)."""
    document: dict[str, Any] = json.loads(GCP_TYPES_FILE.read_text())
    return document


def _gcp_entry(token: str) -> dict[str, Any]:
    entry: dict[str, Any] = gcp_types()["resources"].get(token, {})
    return entry


def terraform_type(token: str) -> str:
    """The Terraform resource type of a pulumi-aws or pulumi-gcp token
    (`aws:s3/bucket:Bucket` -> `aws_s3_bucket`, `gcp:projects/service:Service` ->
    `google_project_service`)."""
    if token in TYPE_OVERRIDES:
        return TYPE_OVERRIDES[token]
    provider, _, rest = token.partition(":")
    module_path, _, type_name = rest.partition(":")
    module = module_path.split("/")[0]
    if provider == "gcp":
        known = _gcp_entry(token).get("terraform")
        if known:
            return str(known)
        # A type newer than the shipped metadata: the rule most google_* types follow.
        return f"google_{module}_{snake_case(type_name)}"
    prefix = MODULE_PREFIXES.get(module, module)
    parts = [provider, prefix, snake_case(type_name)]
    return "_".join(part for part in parts if part)


def block_rename(tf_type: str, token: str, path: str) -> str | None:
    """Terraform's name for the Pulumi attribute at `path` (dotted Python names), when
    Pulumi renamed it."""
    renamed = BLOCK_RENAMES.get((tf_type, path))
    if renamed:
        return renamed[0]
    if token.startswith("gcp:"):
        gcp_name = _gcp_entry(token).get("renames", {}).get(path)
        return str(gcp_name) if gcp_name else None
    return None


_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def terraform_name(resource: Resource) -> str:
    """A Terraform resource name from the Pulumi logical name (letters, digits, _ and -)."""
    name = _NAME_UNSAFE.sub("_", resource.name)
    return name if name[:1].isalpha() or name[:1] == "_" else f"r_{name}"


# ---------------------------------------------------------------------------------------
# The SDK's idea of each input's shape.

Shape = Any  # "scalar" | "map" | ("object", type | None) | ("list", Shape)
SCALAR = "scalar"
MAP = "map"


def _sdk_module(token: str) -> Any:
    provider, _, rest = token.partition(":")
    module = rest.partition(":")[0].split("/")[0]
    for candidate in (f"pulumi_{provider}.{module}", f"pulumi_{provider}.{module}_"):
        try:
            return importlib.import_module(candidate)
        except ImportError:
            continue
    return None


def _args_class(token: str) -> type | None:
    module = _sdk_module(token)
    type_name = token.rpartition(":")[2]
    return getattr(module, f"{type_name}Args", None) if module is not None else None


def _resolve(hint: Any, modules: tuple[Any, ...]) -> Shape:
    """Unwrap `pulumi.Input[Optional[...]]` down to scalar, map, object or list; forward
    references are looked up in `modules` in turn."""
    if isinstance(hint, typing.ForwardRef):
        name = hint.__forward_arg__
        cls = next((getattr(m, name) for m in modules if hasattr(m, name)), None)
        if not isinstance(cls, type) or issubclass(cls, enum.Enum):
            return SCALAR
        return ("object", cls)
    if isinstance(hint, str):
        return _resolve(typing.ForwardRef(hint), modules)
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        for arg in typing.get_args(hint):
            if arg is type(None) or typing.get_origin(arg) is collections.abc.Awaitable:
                continue
            if isinstance(arg, typing.ForwardRef) and arg.__forward_arg__.startswith("Output"):
                continue
            return _resolve(arg, modules)
        return SCALAR
    if origin in (collections.abc.Mapping, dict):
        return MAP
    if origin in (collections.abc.Sequence, list):
        args = typing.get_args(hint)
        return ("list", _resolve(args[0], modules) if args else SCALAR)
    return SCALAR


@functools.cache
def _fields(cls: type) -> dict[str, tuple[str, Shape]]:
    """camelCase input name -> (snake_case name, shape), read from an SDK Args class."""
    module = importlib.import_module(cls.__module__)
    package = importlib.import_module(cls.__module__.rpartition(".")[0])
    fields: dict[str, tuple[str, Shape]] = {}
    for base in reversed(cls.__mro__):
        for python_name, member in vars(base).items():
            getter = getattr(member, "fget", None)
            pulumi_name = getattr(getter, "_pulumi_name", None)
            if pulumi_name is None:
                continue
            hint = getattr(getter, "__annotations__", {}).get("return")
            # Nested Args classes live in the package's _inputs module; the resource module
            # star-imports them, so either resolves the name.
            shape = _resolve(hint, (module, package))
            fields[pulumi_name] = (python_name, shape)
    return fields


def _guess(key: str, value: Any) -> Shape:
    """Shape of an input the SDK does not describe (a non-aws token, a newer field)."""
    if isinstance(value, dict):
        return MAP if key in ("tags", "tagsAll") else ("object", None)
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        return ("list", ("object", None))
    return SCALAR


# ---------------------------------------------------------------------------------------
# References: an input equal to another resource's id or ARN.


@dataclass(frozen=True)
class PlanResource:
    """One emitted resource: its Terraform type, name and address, and its Pulumi origin."""

    resource: Resource
    type: str
    name: str

    @property
    def address(self) -> str:
        return f"{self.type}.{self.name}"


def _emitted(resource: Resource) -> bool:
    return (
        resource.custom
        and not resource.type.startswith("pulumi:")
        and resource.type.partition(":")[0] in PROVIDERS
    )


def _provider(planned: PlanResource) -> str:
    return planned.resource.type.partition(":")[0]


#: Per provider, the attributes another resource's input may copy: (attribute, output key,
#: known at plan time). AWS: ids and ARNs, known only after apply. Google: `name` (a
#: configured or autonamed value, known at plan: Terraform's planned value holds it, which
#: is what checkov's bucket-logging checks read), then `id` and `self_link` (after apply).
REFERENCE_ATTRIBUTES: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "aws": (("id", "id", False), ("arn", "arn", False)),
    "gcp": (("name", "name", True), ("id", "id", False), ("self_link", "selfLink", False)),
}


def terraform_address_map(graph: StackGraph) -> dict[str, PlanResource]:
    """URN -> the Terraform resource it becomes, for every resource the plan emits."""
    emitted: dict[str, PlanResource] = {}
    taken: set[str] = set()
    for resource in graph.resources:
        if not _emitted(resource):
            continue
        tf_type = terraform_type(resource.type)
        name = base = terraform_name(resource)
        counter = 2
        while f"{tf_type}.{name}" in taken:
            name, counter = f"{base}_{counter}", counter + 1
        taken.add(f"{tf_type}.{name}")
        emitted[resource.urn] = PlanResource(resource, tf_type, name)
    return emitted


class _References:
    """Finds which resource an input value came from."""

    def __init__(self, emitted: dict[str, PlanResource]) -> None:
        self.emitted = emitted
        self.by_value: dict[str, list[tuple[PlanResource, str]]] = {}
        #: URN -> every text among the resource's inputs, collected on first use.
        self.input_texts: dict[str, frozenset[str]] = {}
        for planned in emitted.values():
            resource = planned.resource
            for attribute, key, _ in REFERENCE_ATTRIBUTES[_provider(planned)]:
                value = resource.id if key == "id" else resource.outputs.get(key)
                if isinstance(value, str) and value:
                    self.by_value.setdefault(value, []).append((planned, attribute))

    @staticmethod
    def known(ref: tuple[PlanResource, str] | None) -> bool:
        """No reference, or one to an attribute a real plan already knows: the value stays
        in planned_values."""
        if ref is None:
            return True
        planned, attribute = ref
        return any(
            known and name == attribute
            for name, _, known in REFERENCE_ATTRIBUTES[_provider(planned)]
        )

    def find(
        self, value: Any, owner: Resource, key: str, leaf: str
    ) -> tuple[PlanResource, str] | None:
        """`key` is the top-level input (property dependencies are recorded per input),
        `leaf` the attribute holding the value (an `...Arn` wants the ARN)."""
        if not isinstance(value, str) or value not in self.by_value:
            return None
        candidates = [c for c in self.by_value[value] if c[0].resource.urn != owner.urn]
        # The program's own record of where the input came from narrows it down.
        deps = set(owner.property_dependencies.get(key, ()))
        # Google names are short and repeat ("default", "github"), and a bucket's id is its
        # name: equal text is a Google reference only when the input came from that
        # resource (a name typed in is a literal, as in Terraform).
        candidates = [
            c for c in candidates if c[0].resource.urn in deps or not _is_google(c[0].resource)
        ]
        narrowed = [c for c in candidates if c[0].resource.urn in deps]
        candidates = narrowed or candidates
        # S3 bucket settings take the bucket's name as their id; the bucket is the one
        # whose id is not copied from its own input.
        origin = [c for c in candidates if value not in self._input_texts(c[0].resource)]
        candidates = origin or candidates
        if not candidates:
            return None
        if owner.type.startswith("gcp:"):
            order = [attribute for attribute, _, _ in REFERENCE_ATTRIBUTES["gcp"]]
            if "self_link" in leaf.lower():
                order.insert(0, "self_link")
            candidates.sort(key=lambda c: (order.index(c[1]), c[0].address))
            return candidates[0]
        wants_arn = "arn" in leaf.lower()
        candidates.sort(key=lambda c: (c[1] != ("arn" if wants_arn else "id"), c[0].address))
        return candidates[0]

    def _input_texts(self, resource: Resource) -> frozenset[str]:
        """Every text among the resource's inputs, at any depth: asked of the same
        candidate for each value that may refer to it, so collected once."""
        texts = self.input_texts.get(resource.urn)
        if texts is None:
            texts = self.input_texts[resource.urn] = frozenset(_texts(resource.inputs))
        return texts


def _is_google(resource: Resource) -> bool:
    return resource.type.startswith("gcp:")


def _texts(item: Any) -> collections.abc.Iterator[str]:
    if isinstance(item, str):
        yield item
    elif isinstance(item, dict):
        for value in item.values():
            yield from _texts(value)
    elif isinstance(item, list):
        for value in item:
            yield from _texts(value)


# ---------------------------------------------------------------------------------------
# Values and expressions.


class _Converter:
    def __init__(self, planned: PlanResource, references: _References) -> None:
        self.planned = planned
        self.references = references
        self.top_key = ""
        #: Pulumi paths of the list attributes and blocks emitted, for the renames test.
        self.lists: set[str] = set()

    def resource(self) -> tuple[dict[str, Any], dict[str, Any]]:
        resource = self.planned.resource
        cls = _args_class(resource.type)
        fields = _fields(cls) if cls is not None else {}
        values: dict[str, Any] = {}
        expressions: dict[str, Any] = {}
        for key, value in resource.inputs.items():
            if key.startswith("__"):
                continue
            self.top_key = key
            pulumi_name, shape = fields.get(key, (snake_case(key), _guess(key, value)))
            name = self._rename(pulumi_name, "")
            converted, expression = self.value(value, shape, pulumi_name)
            if converted is not None:
                values[name] = converted
            if expression is not None:
                expressions[name] = expression
        if resource.type.startswith("gcp:") and "name" not in values:
            # Pulumi autonamed it (known at preview); Terraform's config would have set it.
            autoname = resource.outputs.get("name")
            if isinstance(autoname, str) and "name" in {n for n, _ in fields.values()}:
                values["name"] = autoname
        return values, expressions

    def _rename(self, name: str, parent_path: str) -> str:
        path = f"{parent_path}.{name}" if parent_path else name
        renamed = block_rename(self.planned.type, self.planned.resource.type, path)
        return renamed or name

    def value(self, value: Any, shape: Shape, path: str) -> tuple[Any, Any]:
        """(planned value, expression or None) for one input."""
        if value is None:
            return None, None
        if shape == MAP:
            return value, None
        if isinstance(shape, tuple) and shape[0] == "object" and isinstance(value, dict):
            obj, expression = self.object(value, shape[1], path)
            return [obj], ([expression] if expression else None)
        if isinstance(shape, tuple) and shape[0] == "list" and isinstance(value, list):
            if value:
                self.lists.add(path)
            inner = shape[1]
            if isinstance(inner, tuple) and inner[0] == "object":
                pairs = [
                    self.object(item, inner[1], path) if isinstance(item, dict) else (item, {})
                    for item in value
                ]
                expressions = [expression for _, expression in pairs]
                return [obj for obj, _ in pairs], (expressions if any(expressions) else None)
            owner = self.planned.resource
            leaf = path.rpartition(".")[2]
            refs = [self.references.find(item, owner, self.top_key, leaf) for item in value]
            if any(refs):
                planned = [
                    item if self.references.known(ref) else None
                    for item, ref in zip(value, refs, strict=True)
                ]
                return planned, {"references": _reference_strings(r for r in refs if r)}
            return value, None
        if isinstance(value, dict | list):
            # A JSON document passed as an object (Terraform takes it as a string).
            return json.dumps(value), None
        leaf = path.rpartition(".")[2]
        ref = self.references.find(value, self.planned.resource, self.top_key, leaf)
        if ref is not None:
            planned_value = value if self.references.known(ref) else None
            return planned_value, {"references": _reference_strings([ref])}
        return value, None

    def object(self, value: dict[str, Any], cls: type | None, path: str) -> tuple[dict, dict]:
        fields = _fields(cls) if cls is not None else {}
        obj: dict[str, Any] = {}
        expressions: dict[str, Any] = {}
        for key, item in value.items():
            pulumi_name, shape = fields.get(key, (snake_case(key), _guess(key, item)))
            name = self._rename(pulumi_name, path)
            converted, expression = self.value(item, shape, f"{path}.{pulumi_name}")
            if converted is not None:
                obj[name] = converted
            if expression is not None:
                expressions[name] = expression
        return obj, expressions


def _reference_strings(refs: Any) -> list[str]:
    strings: list[str] = []
    for planned, attribute in refs:
        strings += [f"{planned.address}.{attribute}", planned.address]
    return list(dict.fromkeys(strings))


def list_attributes(graph: StackGraph) -> set[tuple[str, str, str]]:
    """(Terraform type, Pulumi path, emitted name) of every non-empty list attribute or
    repeatable block the plan emits."""
    emitted = terraform_address_map(graph)
    references = _References(emitted)
    found: set[tuple[str, str, str]] = set()
    for planned in emitted.values():
        converter = _Converter(planned, references)
        converter.resource()
        for path in converter.lists:
            parent, _, leaf = path.rpartition(".")
            renamed = block_rename(planned.type, planned.resource.type, path)
            found.add((planned.type, path, renamed or leaf))
    return found


def to_terraform_plan(graph: StackGraph) -> dict[str, Any]:
    """The stack as the JSON `terraform show -json plan` prints for a plan creating it."""
    emitted = terraform_address_map(graph)
    references = _References(emitted)
    planned_resources = []
    configured_resources = []
    used: set[str] = set()
    for planned in emitted.values():
        values, expressions = _Converter(planned, references).resource()
        config_key, provider_name = PROVIDERS[_provider(planned)]
        used.add(_provider(planned))
        common = {
            "address": planned.address,
            "mode": "managed",
            "type": planned.type,
            "name": planned.name,
        }
        planned_resources.append(
            {
                **common,
                "provider_name": provider_name,
                "schema_version": 0,
                "values": values,
                "sensitive_values": {},
            }
        )
        configured_resources.append(
            {**common, "provider_config_key": config_key, "expressions": expressions}
        )
    return {
        "format_version": "1.2",
        "terraform_version": "1.9.0",
        "planned_values": {"root_module": {"resources": planned_resources}},
        "resource_changes": [
            {
                "address": item["address"],
                "mode": "managed",
                "type": item["type"],
                "name": item["name"],
                "provider_name": item["provider_name"],
                "change": {"actions": ["create"], "before": None, "after": item["values"]},
            }
            for item in planned_resources
        ],
        "configuration": {
            "provider_config": _provider_config(graph, used or {"aws"}),
            "root_module": {"resources": configured_resources},
        },
    }


def _provider_config(graph: StackGraph, providers: set[str]) -> dict[str, Any]:
    """Terraform's provider blocks, with the stack's region (and Google project) config."""
    settings = {"aws": ("region",), "gcp": ("project", "region")}
    config: dict[str, Any] = {}
    for provider in sorted(providers):
        key, full_name = PROVIDERS[provider]
        expressions = {
            setting: {"constant_value": graph.config[f"{provider}:{setting}"]}
            for setting in settings[provider]
            if graph.config.get(f"{provider}:{setting}")
        }
        config[key] = {"name": key, "full_name": full_name, "expressions": expressions}
    return config
