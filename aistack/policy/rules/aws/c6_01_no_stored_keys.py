"""AIS-C6-01: no IAM users, access keys, console passwords or AWS keys stored as secrets."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule

#: Resources that only exist to give a person or program long-lived AWS credentials.
LONG_LIVED = {
    "aws:iam/user:User": "an IAM user: a standing identity whose keys or password never expire",
    "aws:iam/accessKey:AccessKey": "an IAM access key: a long-lived secret that works anywhere",
    "aws:iam/userLoginProfile:UserLoginProfile": "a console password for an IAM user",
    "aws:iam/serviceSpecificCredential:ServiceSpecificCredential": "a long-lived service "
    "password for an IAM user",
    "aws:iam/signingCertificate:SigningCertificate": "a signing certificate for an IAM user",
    "aws:iam/sshKey:SshKey": "an SSH key for an IAM user",
}
ROLE = "aws:iam/role:Role"

# An access key id (long-lived AKIA, or a session's ASIA copied into config) or the variable
# that carries the secret half, anywhere in a resource's inputs: environment variables, user
# data, SSM parameters, Secrets Manager values, task and job definitions.
_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_SECRET_NAME = re.compile(r"aws_secret_access_key", re.IGNORECASE)


def _stored_key(value: object) -> str | None:
    if isinstance(value, str):
        if _KEY_ID.search(value):
            return "an AWS access key id"
        if _SECRET_NAME.search(value):
            return "an AWS secret access key"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _SECRET_NAME.search(key):
                return "an AWS secret access key"
            found = _stored_key(item)
            if found:
                return found
        return None
    if isinstance(value, list | tuple):
        for item in value:
            found = _stored_key(item)
            if found:
                return found
    return None


@rule(
    id="AIS-C6-01",
    checklist=["C6"],
    info="No IAM users, access keys or console passwords; no AWS keys stored in resources.",
    why="Stored keys do not expire, work from anywhere and leak through logs, images and "
    "laptops. Roles give every workload credentials that last an hour and only work for it.",
    fix="Delete the IAM user and its keys; give the workload a role (aws.WorkloadIdentity), "
    "CI a GitHub OIDC role, and people SSO. Remove AWS keys from environment variables, "
    "parameters and secrets.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if resource.type in LONG_LIVED:
            yield fail(resource, LONG_LIVED[resource.type] + ".")
        elif resource.custom:
            found = _stored_key(resource.inputs)
            if found:
                yield fail(resource, f"its inputs hold {found}.")
            elif resource.type == ROLE:
                yield ok(resource, "a role: credentials are temporary and issued per session.")
