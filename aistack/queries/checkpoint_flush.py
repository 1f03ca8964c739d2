"""The checkpoint flush of training nodes on both clouds, as rules AIS-T1-05 and AIS-T1-06
read it from the graph: each node's rendered spot-watch settings, the bucket and prefix it
flushes to, the identity the flush runs as, and what that identity may do there.

The settings are the `AISTACK_*` env file the node config renders into the GCE startup
script or the EC2 user data (aistack.node.render); a value the env file leaves out is the
script's own default, as spot-watch.sh and bootstrap.sh set it.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries import aws_iam
from aistack.queries.aws_training import container, training_job_definitions, training_templates
from aistack.queries.aws_training import user_data as ec2_user_data
from aistack.queries.gcp import custom_role_permissions, gpu_templates, node_environment
from aistack.queries.gcp_roles import default_data

__all__ = [
    "SCRIPT_DEFAULTS",
    "FlushNode",
    "aws_allows",
    "flush_nodes",
    "flush_roles",
    "gcs_permissions",
]

#: What spot-watch.sh (poll, delay) and bootstrap.sh write_unit (stop timeout) use when
#: the env file does not say.
SCRIPT_DEFAULTS = {
    "AISTACK_SPOT_POLL_SECONDS": 5,
    "AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS": 30,
    "AISTACK_SPOT_STOP_TIMEOUT_SECONDS": 90,
}

_ENV_BLOCK = re.compile(r"<<'AISTACK_ENV'\n(.*?)AISTACK_ENV\n", re.S)
_URI = re.compile(r"(?P<scheme>s3|gs)://(?P<bucket>[^/]+)/?(?P<prefix>.*)")
_CONDITION_TERM = re.compile(r'resource\.name(?:\.startsWith\("([^"]*)"\)| == "([^"]*)")')
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"


@dataclass(frozen=True)
class FlushNode:
    """One training node template that flushes checkpoints, and its settings."""

    resource: Resource
    cloud: str
    env: dict[str, str]

    def seconds(self, key: str) -> int:
        """A timing setting, the script's default when the env file leaves it out."""
        value = self.env.get(key, "")
        return int(value) if value.isdigit() else SCRIPT_DEFAULTS[key]

    @property
    def destination(self) -> tuple[str, str] | None:
        """(bucket, prefix) of AISTACK_CHECKPOINT_URI, None without one."""
        match = _URI.fullmatch(self.env.get("AISTACK_CHECKPOINT_URI", ""))
        return (match["bucket"], match["prefix"].strip("/")) if match else None


def _env_block(script: str) -> dict[str, str]:
    match = _ENV_BLOCK.search(script)
    env: dict[str, str] = {}
    for line in match.group(1).splitlines() if match else []:
        key, _, value = line.partition("=")
        if key.startswith("AISTACK_"):
            env[key] = (shlex.split(value) or [""])[0]
    return env


def flush_nodes(graph: StackGraph) -> list[FlushNode]:
    """Training node templates whose spot watch flushes checkpoints (a checkpoint URI or a
    flush command in their rendered settings): GCE GPU templates and EC2 launch templates
    tagged for training."""
    found = []
    candidates = [(t, "gcp", node_environment(t)) for t in gpu_templates(graph)]
    candidates += [(t, "aws", _env_block(ec2_user_data(t))) for t in training_templates(graph)]
    for template, cloud, env in candidates:
        if env.get("AISTACK_CHECKPOINT_URI") or env.get("AISTACK_CHECKPOINT_FLUSH_CMD"):
            found.append(FlushNode(template, cloud, env))
    return found


# ---- Google Cloud: what the VM's service account may do on the checkpoint prefix ---------


def _condition_covers(condition: Any, name: str) -> bool:
    """Whether an IAM condition made of `resource.name.startsWith("…")` / `resource.name ==
    "…"` terms joined by `||` lets `name` through; any other expression counts as not."""
    if not condition:
        return True
    expression = str(condition.get("expression", "")) if isinstance(condition, dict) else ""
    matches = [_CONDITION_TERM.fullmatch(term.strip()) for term in expression.split("||")]
    if not all(matches):
        return False
    for match in matches:
        assert match is not None
        prefix, exact = match.groups()
        if (prefix is not None and name.startswith(prefix)) or exact == name:
            return True
    return False


def _role_permissions(graph: StackGraph, role: str) -> frozenset[str]:
    custom = custom_role_permissions(graph, role)
    if custom is not None:
        return frozenset(custom)
    try:
        return default_data().permissions_of(role)
    except KeyError:
        # The data carries the permissions of the roles aistack grants (ROLES_USED of
        # tools/refresh_gcp_roles.py); any other role holds no storage permission of ours.
        return frozenset()


def gcs_permissions(graph: StackGraph, member: str, bucket: str, resource_name: str) -> set[str]:
    """The Cloud Storage permissions `member` holds on `resource_name`
    (`projects/_/buckets/<b>[/objects/<o>]`) of `bucket`: its bucket grants whose condition
    lets the name through, and its unconditioned project grants. Predefined roles are read
    from Google's roles reference (aistack/scan/data/gcp_roles.json), custom ones from the
    graph."""
    held: set[str] = set()
    for grant in graph.of_type(BUCKET_MEMBER):
        inputs = grant.inputs
        if (
            inputs.get("member") == member
            and inputs.get("bucket") == bucket
            and _condition_covers(inputs.get("condition"), resource_name)
        ):
            held |= _role_permissions(graph, str(inputs.get("role")))
    for grant in graph.of_type(PROJECT_MEMBER):
        inputs = grant.inputs
        if inputs.get("member") == member and not inputs.get("condition"):
            held |= _role_permissions(graph, str(inputs.get("role")))
    return {p for p in held if p.startswith("storage.")}


# ---- AWS: the role the flush runs as and what its policies allow -------------------------


def _role_named(graph: StackGraph, reference: str) -> Resource | None:
    for role in graph.of_type(ROLE):
        if reference in (role.outputs.get("arn"), role.outputs.get("name"), role.id):
            return role
    return None


def flush_roles(graph: StackGraph, node: FlushNode) -> list[Resource]:
    """The IAM roles the flush of an EC2 node runs as. A Batch host's spot watch borrows
    the credentials of a running job of its pool (spot-watch.sh adopt_job_credentials): the
    job roles of the job definitions that flush to the same URI. Any other node flushes as
    its instance profile's role."""
    if node.env.get("AISTACK_SCHEDULER") == "batch":
        uri = node.env.get("AISTACK_CHECKPOINT_URI")
        roles = []
        for job in training_job_definitions(graph):
            properties = container(job)
            env = {e.get("name"): e.get("value") for e in properties.get("environment", [])}
            role = _role_named(graph, str(properties.get("jobRoleArn") or ""))
            if env.get("AISTACK_CHECKPOINT_URI") == uri and role is not None:
                roles.append(role)
        return roles
    profile_ref = node.resource.inputs.get("iamInstanceProfile") or {}
    wanted = {profile_ref.get("arn"), profile_ref.get("name")} - {None}
    for profile in graph.of_type(INSTANCE_PROFILE):
        if wanted & {profile.outputs.get("arn"), profile.outputs.get("name"), profile.id}:
            role = _role_named(graph, str(profile.inputs.get("role") or ""))
            return [role] if role is not None else []
    return []


def _matches(patterns: Any, value: str) -> bool:
    listed = patterns if isinstance(patterns, list) else [patterns]
    return any(fnmatch.fnmatchcase(value.lower(), str(p).lower()) for p in listed if p)


def _arn_matches(patterns: Any, arn: str) -> bool:
    # The partition is the account's (aws, aws-cn, aws-us-gov): compare the rest.
    listed = patterns if isinstance(patterns, list) else [patterns]
    rest = arn.split(":", 2)[2]
    return any(
        str(p) == "*" or fnmatch.fnmatchcase(rest, str(p).split(":", 2)[-1]) for p in listed if p
    )


def aws_allows(graph: StackGraph, role: Resource, action: str, arn: str) -> bool:
    """Whether the role's inline policies allow `action` on `arn` and none denies it.
    Conditions are taken as met: the grants aistack writes condition only where they narrow
    to the same prefix (s3:prefix) or service (kms:ViaService)."""
    names = {role.outputs.get("name"), role.id, role.outputs.get("arn")} - {None}
    allowed = denied = False
    for policy in graph.of_type(ROLE_POLICY):
        if policy.inputs.get("role") not in names:
            continue
        for statement in aws_iam.statements(policy.inputs.get("policy")) or []:
            if _matches(statement.get("Action"), action) and _arn_matches(
                statement.get("Resource"), arn
            ):
                if statement.get("Effect") == "Deny":
                    denied = True
                elif statement.get("Effect") == "Allow":
                    allowed = True
    return allowed and not denied
