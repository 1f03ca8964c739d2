"""AIS-E1-01: ECR repositories keep tags immutable, scan every push and encrypt with KMS."""

from collections.abc import Iterator
from fnmatch import fnmatchcase

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list

REPOSITORY = "aws:ecr/repository:Repository"
REGISTRY_SCANNING = "aws:ecr/registryScanningConfiguration:RegistryScanningConfiguration"
KMS_TYPES = ("KMS", "KMS_DSSE")


def _scanned_by_registry(graph: StackGraph, repository_name: str) -> bool:
    """True when a registry-level scanning rule scans this repository on push or
    continuously; ECR applies such rules in place of the repository's own setting."""
    for config in graph.of_type(REGISTRY_SCANNING):
        for scan_rule in as_list(config.inputs.get("rules")):
            if scan_rule.get("scanFrequency") not in ("SCAN_ON_PUSH", "CONTINUOUS_SCAN"):
                continue
            for repo_filter in as_list(scan_rule.get("repositoryFilters")):
                if fnmatchcase(repository_name, str(repo_filter.get("filter", ""))):
                    return True
    return False


def _gaps(graph: StackGraph, repository: Resource) -> list[str]:
    gaps = []
    if repository.inputs.get("imageTagMutability") != "IMMUTABLE":
        mutability = repository.inputs.get("imageTagMutability") or "MUTABLE (the default)"
        gaps.append(f"tags are {mutability}, so a tag can be moved to another build")
    name = str(repository.outputs.get("name") or repository.name)
    scan_on_push = repository.get("imageScanningConfiguration", "scanOnPush") is True
    if not (scan_on_push or _scanned_by_registry(graph, name)):
        gaps.append("images are not scanned on push")
    encryption = as_list(repository.inputs.get("encryptionConfigurations"))
    encryption_type = encryption[0].get("encryptionType") if encryption else None
    if encryption_type not in KMS_TYPES:
        gaps.append(f"encrypted with {encryption_type or 'AES256 (the default)'}, not KMS")
    return gaps


@rule(
    id="AIS-E1-01",
    checklist=["E1"],
    info="ECR repositories have immutable tags, scan on push and KMS encryption.",
    why="A pinned image is only reproducible if the registry cannot rewrite it: mutable "
    "tags let a push silently replace what 'v1.4' means, unscanned images ship known CVEs "
    "in CUDA and framework layers, and KMS puts who may read the images under key policy.",
    fix="Use aws.ContainerRegistry, or set imageTagMutability IMMUTABLE, "
    "imageScanningConfiguration.scanOnPush true and encryptionConfigurations "
    "[{encryptionType: KMS, kmsKey: <key arn>}] on the repository (encryption can only be "
    "set when the repository is created).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for repository in graph.of_type(REPOSITORY):
        gaps = _gaps(graph, repository)
        if gaps:
            yield fail(repository, "; ".join(gaps) + ".")
        else:
            yield ok(repository, "immutable tags, scanned on push, KMS-encrypted.")
