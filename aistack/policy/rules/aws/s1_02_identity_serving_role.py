"""AIS-S1-02: the role serving nodes run as can reach no training data.

Network separation (AIS-S1-01) keeps serving nodes from connecting to training nodes; this
keeps their credentials from reading training data directly. A serving role is one tagged
`aistack:workload=inference` or the role of an instance profile a serving launch template
uses. Training data is any bucket tagged as a dataset or checkpoint store
(`aistack:workload` data-dataset, data-checkpoints or training, as aws.DatasetBucket tags
them). The role fails if any policy it holds (inline, attached customer policy, or a broad
AWS-managed one such as AmazonS3ReadOnlyAccess) allows S3 actions on such a bucket or on
every resource. Conditions are not evaluated: a grant that needs a condition to be safe is
still a grant.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import BUCKET, as_list, tags
from aistack.queries.aws_iam import statements
from aistack.queries.aws_serving import (
    WORKLOAD_TAG,
    is_inference,
    serving_templates,
)

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
POLICY = "aws:iam/policy:Policy"
INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"
TRAINING_DATA = frozenset({"data-dataset", "data-checkpoints", "training"})
#: AWS-managed policies that read every bucket in the account.
_READS_ALL_BUCKETS = re.compile(
    r"^arn:aws[a-z-]*:iam::aws:policy/(?:.*/)?"
    r"(AdministratorAccess|PowerUserAccess|ReadOnlyAccess|AmazonS3FullAccess|AmazonS3ReadOnlyAccess)$"
)


def _name(resource: Resource) -> str:
    return str(resource.outputs.get("name") or resource.inputs.get("name") or resource.id)


def serving_roles(graph: StackGraph) -> list[Resource]:
    profiles = {
        str(p.outputs.get("arn")): str(p.inputs.get("role") or "")
        for p in graph.of_type(INSTANCE_PROFILE)
    }
    used = {
        profiles.get(str((t.inputs.get("iamInstanceProfile") or {}).get("arn")), "")
        for t in serving_templates(graph)
    }
    used |= {
        str((t.inputs.get("iamInstanceProfile") or {}).get("name") or "")
        for t in serving_templates(graph)
    }
    used.discard("")
    return [
        role
        for role in graph.of_type(ROLE)
        if is_inference(role) or _name(role) in used or role.id in used
    ]


def _documents(graph: StackGraph, role: Resource) -> Iterator[tuple[str, Any]]:
    keys = {role.id, _name(role)}
    for index, inline in enumerate(as_list(role.inputs.get("inlinePolicies"))):
        if isinstance(inline, dict):
            yield f"inline policy {inline.get('name') or index}", inline.get("policy")
    for policy in graph.of_type(ROLE_POLICY):
        if str(policy.inputs.get("role")) in keys:
            yield f"role policy {policy.name}", policy.inputs.get("policy")
    customer = {str(p.outputs.get("arn")): p for p in graph.of_type(POLICY)}
    arns = [str(a) for a in as_list(role.inputs.get("managedPolicyArns"))]
    arns += [
        str(a.inputs.get("policyArn"))
        for a in graph.of_type(ATTACHMENT)
        if str(a.inputs.get("role")) in keys
    ]
    for arn in arns:
        if arn in customer:
            yield f"policy {customer[arn].name}", customer[arn].inputs.get("policy")
        elif _READS_ALL_BUCKETS.match(arn):
            yield (
                f"AWS-managed {arn.rsplit('/', 1)[-1]}",
                {"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]},
            )


def _touches_s3(actions: list[str]) -> bool:
    return any(a == "*" or a.lower().startswith("s3:") for a in actions)


def _reached(statement: dict[str, Any], buckets: dict[str, str]) -> list[str]:
    """Names of the training buckets an Allow statement's resources cover."""
    if "NotResource" in statement:
        return sorted(buckets.values())
    patterns = [str(r) for r in as_list(statement.get("Resource"))]
    return sorted(
        name
        for arn, name in buckets.items()
        if any(
            fnmatch.fnmatchcase(arn, p) or fnmatch.fnmatchcase(f"{arn}/object", p) for p in patterns
        )
    )


@rule(
    id="AIS-S1-02",
    checklist=["S1"],
    info="Serving roles hold no S3 access to dataset or checkpoint buckets.",
    why="Inference faces users; a serving node's credentials that can read training data turn "
    "one compromised endpoint into a data breach, whatever the network allows.",
    fix="Grant the inference role only the models bucket under the model's prefix "
    "(aws.InferenceTier does: models.grant_read(role, prefix='<model>/')); remove dataset and "
    "checkpoint grants and broad S3 policies from it.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    buckets = {
        str(b.outputs.get("arn")): b.name
        for b in graph.of_type(BUCKET)
        if tags(b).get(WORKLOAD_TAG) in TRAINING_DATA and b.outputs.get("arn")
    }
    for role in serving_roles(graph):
        problems = []
        for label, document in _documents(graph, role):
            for statement in statements(document) or []:
                if statement.get("Effect") != "Allow":
                    continue
                actions = [str(a) for a in as_list(statement.get("Action"))]
                if "NotAction" in statement or _touches_s3(actions):
                    reached = _reached(statement, buckets)
                    if reached:
                        problems.append(f"{label} reaches {', '.join(reached)}")
        if problems:
            yield fail(role, "serving role can read training data: " + "; ".join(problems) + ".")
        else:
            yield ok(role, "serving role has no access to dataset or checkpoint buckets.")
