"""`aws.ContainerRegistry`: private ECR repositories for a stack's images, pinned by digest.

One repository per image (trainer, inference server, ...), each with immutable tags, a scan
on every push, encryption under a rotating customer KMS key and a lifecycle policy that keeps
the last releases and drops untagged leftovers (checklist E1). Workloads take images from it
by digest through `image()`, so what runs is exactly what was built and scanned. The
repositories live in an explicit region inside the allowed regions (C4) and survive
`pulumi destroy` unless `allow_destroy_with_images` says otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws
from pydantic import Field, field_validator

from aistack._adopt import adopting, found
from aistack.aws import _perms
from aistack.aws._base import child_opts, policy_output, stateful_opts, tags_for
from aistack.aws._kms import customer_key
from aistack.config import AistackModel, Governance
from aistack.contracts.images import check_tag_prefixes, image_by_digest, normalize_digest
from aistack.errors import ConfigError, Problems

__all__ = ["ContainerRegistry", "ContainerRegistryArgs", "lifecycle_policy"]

#: ECR's repository name grammar (CreateRepository API): lowercase path components joined
#: by `/`, each made of alphanumerics separated by single `.`, `_` or `-`.
REPOSITORY_NAME = re.compile(r"^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*$")
_NAMESPACE = re.compile(r"^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*/?$")
_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:(?P<region>[a-z0-9-]+):\d{12}:key/[A-Za-z0-9-]+$")
_MAX_REPOSITORY_NAME = 256


def lifecycle_policy(
    keep_release_images: int, release_tag_prefixes: Sequence[str], untagged_expiry_days: int
) -> str:
    """The ECR lifecycle policy JSON: keep the newest N images per release prefix, expire
    untagged images after D days, leave every other tagged image alone."""
    # ECR selects an image for a rule only if it carries a tag for EVERY prefix in one
    # tagPrefixList, so each prefix gets its own rule to mean "any of these prefixes".
    rules: list[dict[str, Any]] = [
        {
            "rulePriority": priority,
            "description": f"Keep the newest {keep_release_images} images tagged {prefix}*",
            "selection": {
                "tagStatus": "tagged",
                "tagPrefixList": [prefix],
                "countType": "imageCountMoreThan",
                "countNumber": keep_release_images,
            },
            "action": {"type": "expire"},
        }
        for priority, prefix in enumerate(release_tag_prefixes, start=1)
    ]
    rules.append(
        {
            "rulePriority": len(rules) + 1,
            "description": f"Expire untagged images {untagged_expiry_days} days after push",
            "selection": {
                "tagStatus": "untagged",
                "countType": "sinceImagePushed",
                "countUnit": "days",
                "countNumber": untagged_expiry_days,
            },
            "action": {"type": "expire"},
        }
    )
    return json.dumps({"rules": rules})


class ContainerRegistryArgs(AistackModel):
    """Arguments of `ContainerRegistry`; every field documented with its default and why."""

    repositories: tuple[str, ...] = Field(
        min_length=1,
        description="One repository per image name, e.g. ['trainer', 'vllm-server']. Each "
        "must be a valid ECR repository name (lowercase, digits, '.', '_', '-', '/').",
    )
    region: str = Field(
        description="Region of the repositories; must be in governance.allowed_regions (C4). "
        "Explicit: never the provider's default. Pulls from another region cost transfer."
    )
    governance: Governance
    namespace: str | None = Field(
        None,
        description="Prefix of every repository name, e.g. 'ml-platform/'. Default: "
        "'<project>/<stack>/', since ECR names are unique per region and the account's other "
        "stacks (this program's `staging` beside `dev` too) pick theirs; '' for none.",
    )
    keep_release_images: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Newest images kept per release tag prefix (default 20): enough to roll "
        "back months of releases, few enough that storage stays flat.",
    )
    release_tag_prefixes: tuple[str, ...] = Field(
        ("v", "release-"),
        min_length=1,
        max_length=20,
        description="Tag prefixes that mark releases (default 'v', 'release-'); each is "
        "kept to keepReleaseImages. Images with other tags are never expired.",
    )
    untagged_expiry_days: int = Field(
        7,
        ge=1,
        le=3650,
        description="Days after push an untagged image is expired (default 7): build "
        "leftovers and superseded layers, long enough to finish a rollout that used one.",
    )
    kms_key_arn: str | None = Field(
        None,
        description="Encrypt with this existing customer key (same region); default: a new "
        "key for this registry, rotated yearly. ECR fixes the key at repository creation.",
    )
    allow_destroy_with_images: bool = Field(
        False,
        description="Let `pulumi destroy` delete the repositories with every image in them. "
        "Off: repositories and their key are retained (and protected in prod).",
    )

    @field_validator("repositories")
    @classmethod
    def _repositories_are_ecr_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        bad = [n for n in names if not (2 <= len(n) <= 256 and REPOSITORY_NAME.match(n))]
        if bad:
            raise ValueError(
                f"{bad} {'is not a' if len(bad) == 1 else 'are not'} valid ECR repository "
                "name(s). Fix: use 2-256 lowercase letters and digits, separated by single "
                "'.', '_' or '-', with '/' between path parts, e.g. 'vllm-server'."
            )
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"{duplicates} listed twice. Fix: list each image name once.")
        return names

    @field_validator("namespace")
    @classmethod
    def _namespace_is_a_name_prefix(cls, namespace: str | None) -> str | None:
        if namespace and not _NAMESPACE.match(namespace):
            raise ValueError(
                f"{namespace!r} is not a repository name prefix. Fix: use lowercase path "
                "parts like 'ml-platform/' or 'team/project/'."
            )
        return namespace

    @field_validator("release_tag_prefixes")
    @classmethod
    def _prefixes_are_tags(cls, prefixes: tuple[str, ...]) -> tuple[str, ...]:
        return check_tag_prefixes(prefixes)

    @field_validator("kms_key_arn")
    @classmethod
    def _key_is_a_key_arn(cls, arn: str | None) -> str | None:
        if arn is not None and not _KMS_KEY_ARN.match(arn):
            raise ValueError(
                f"{arn!r} is not a KMS key ARN. Fix: pass the key's ARN, "
                "'arn:aws:kms:<region>:<account>:key/<key id>' (not an alias)."
            )
        return arn

    def repository_name(self, image: str) -> str:
        """The physical ECR name of `image`: the namespace, then the image name."""
        namespace = self.namespace
        if namespace is None:
            namespace = _stack_namespace(pulumi.get_project(), pulumi.get_stack())
        if not namespace:
            return image
        return f"{namespace.rstrip('/')}/{image}"


class ContainerRegistry(pulumi.ComponentResource):
    """Private ECR repositories: immutable tags, scan on push, KMS, lifecycle-managed."""

    repositories: dict[str, aws.ecr.Repository]
    repository_urls: dict[str, pulumi.Output[str]]
    repository_arns: dict[str, pulumi.Output[str]]
    kms_key_arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: ContainerRegistryArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        def checks(args: ContainerRegistryArgs) -> None:
            problems = Problems()
            region_problem = args.governance.region_problem(args.region, f"{name}.region")
            if region_problem:
                problems.items.append(region_problem)
            if args.kms_key_arn:
                key_region = _KMS_KEY_ARN.match(args.kms_key_arn)["region"]  # type: ignore[index]
                if key_region != args.region:
                    problems.add(
                        f"{name}.kmsKeyArn",
                        f"the key is in {key_region}; ECR encrypts only with a key in the "
                        f"repository's region ({args.region}).",
                        f"pass a key in {args.region}, or leave kmsKeyArn unset for a new key.",
                    )
            for image in args.repositories:
                full = args.repository_name(image)
                if len(full) > _MAX_REPOSITORY_NAME:
                    problems.add(
                        f"{name}.repositories",
                        f"{full!r} is longer than ECR's {_MAX_REPOSITORY_NAME} characters.",
                        "shorten the namespace or the image name.",
                    )
            problems.raise_if_any()

        args = ContainerRegistryArgs.validate_with(args, checks, where=name)[0]

        super().__init__(
            "aistack:index:AwsContainerRegistry",
            name,
            {"repository_names": list(args.repositories), "region": args.region},
            opts,
        )
        self.args = args
        self.region = args.region
        self._name = name
        tags = tags_for(args.governance, workload="images")
        retained = {"allow_destroy": args.allow_destroy_with_images}

        # Repositories this stack left on an earlier destroy (retained with their images)
        # are taken over by the next `up`, not met with RepositoryAlreadyExistsException
        # (aistack._adopt).
        left = _left_repositories(
            [args.repository_name(image) for image in args.repositories], args.region, self
        )
        self.kms_key: aws.kms.Key | None = None
        if args.kms_key_arn:
            self.kms_key_arn = pulumi.Output.from_input(args.kms_key_arn)
        else:
            # Retained with the repositories: images encrypted under a deleted key are lost.
            self.kms_key = customer_key(
                f"{name}-key",
                description=f"aistack container registry {name}",
                region=args.region,
                tags=tags,
                opts=stateful_opts(self, args.governance, **retained),
            )
            self.kms_key_arn = self.kms_key.arn

        self.repositories = {}
        self.lifecycle_policies: dict[str, aws.ecr.LifecyclePolicy] = {}
        policy = lifecycle_policy(
            args.keep_release_images, args.release_tag_prefixes, args.untagged_expiry_days
        )
        for image in args.repositories:
            repository = aws.ecr.Repository(
                f"{name}-{image}",
                name=args.repository_name(image),
                region=args.region,
                # A tag, once pushed, names one build forever; CI pushes a new tag per build.
                image_tag_mutability="IMMUTABLE",
                image_scanning_configuration=aws.ecr.RepositoryImageScanningConfigurationArgs(
                    scan_on_push=True
                ),
                encryption_configurations=[
                    aws.ecr.RepositoryEncryptionConfigurationArgs(
                        encryption_type="KMS", kms_key=self.kms_key_arn
                    )
                ],
                force_delete=args.allow_destroy_with_images,
                tags=tags,
                # ECR fixes a repository's key at creation: one taken over keeps the key it
                # was created with (kept too) rather than being replaced for the new one.
                opts=adopting(
                    stateful_opts(
                        self,
                        args.governance,
                        ignore_changes=["encryptionConfigurations"],
                        **retained,
                    ),
                    left.get(args.repository_name(image)),
                ),
            )
            self.repositories[image] = repository
            self.lifecycle_policies[image] = aws.ecr.LifecyclePolicy(
                f"{name}-{image}-lifecycle",
                repository=repository.name,
                region=args.region,
                policy=policy,
                opts=child_opts(self),
            )

        self.repository_urls = {i: r.repository_url for i, r in self.repositories.items()}
        self.repository_arns = {i: r.arn for i, r in self.repositories.items()}
        self.register_outputs(
            {
                "repository_urls": self.repository_urls,
                "repository_arns": self.repository_arns,
                "kms_key_arn": self.kms_key_arn,
                "region": args.region,
            }
        )

    # ---- images --------------------------------------------------------------------------

    def image(self, repository: str, digest: pulumi.Input[str]) -> pulumi.Output[str]:
        """`<repository url>@sha256:<digest>`: how a workload should reference the image.

        `digest` may be an Output (e.g. a build resource's digest); a plain string is checked
        here, so a bad one fails before anything deploys.
        """
        self._check_known([repository], f"{self._name}.image.repository")
        field = f"{self._name}.image.digest"
        if isinstance(digest, str):
            digest = normalize_digest(digest, field)
        return pulumi.Output.all(self.repository_urls[repository], digest).apply(
            lambda resolved: image_by_digest(resolved[0], resolved[1], field=field)
        )

    # ---- grants --------------------------------------------------------------------------

    def grant_pull(
        self,
        role: aws.iam.Role,
        *,
        repositories: Iterable[str] | None = None,
        name: str | None = None,
    ) -> aws.iam.RolePolicy:
        """Let `role` pull images from `repositories` (default: all of this registry's)."""
        return self._grant(role, "pull", _perms.ECR_PULL, repositories, name)

    def grant_push(
        self,
        role: aws.iam.Role,
        *,
        repositories: Iterable[str] | None = None,
        name: str | None = None,
    ) -> aws.iam.RolePolicy:
        """Let `role` push (and read back) images to `repositories`; never delete."""
        return self._grant(role, "push", _perms.ECR_PUSH, repositories, name)

    def _grant(
        self,
        role: aws.iam.Role,
        verb: str,
        actions: tuple[str, ...],
        repositories: Iterable[str] | None,
        name: str | None,
    ) -> aws.iam.RolePolicy:
        chosen = list(self.args.repositories if repositories is None else repositories)
        self._check_known(chosen, f"{self._name}.grant_{verb}.repositories")
        statements: list[object] = [
            {
                "Sid": "Auth",
                "Effect": "Allow",
                "Action": list(_perms.ECR_AUTH),
                # GetAuthorizationToken supports no resource-level permissions: AWS requires
                # "*". The token alone grants nothing; every pull or push is still checked
                # against the repository-scoped statement below.
                "Resource": "*",
            },
            {
                "Sid": "Repositories",
                "Effect": "Allow",
                "Action": list(actions),
                "Resource": [self.repository_arns[image] for image in chosen],
            },
        ]
        # No KMS statement: ECR decrypts and encrypts layers through the grant it holds on
        # the key, so pulling and pushing principals need no kms:* permission.
        role_key = name or role._name  # noqa: SLF001 - the role's logical name keys the grant
        return aws.iam.RolePolicy(
            f"{self._name}-{verb}-{role_key}",
            role=role.id,
            policy=policy_output(*statements),
            opts=child_opts(self),
        )

    def _check_known(self, images: Sequence[str], field: str) -> None:
        unknown = [image for image in images if image not in self.repositories]
        if not images or unknown:
            raise ConfigError(
                f"{unknown or 'no repository'} is not a repository of this registry "
                f"({list(self.args.repositories)}).",
                field=field,
                fix="name one of the registry's repositories, or add it to repositories.",
            )


def _stack_namespace(project: str, stack: str) -> str:
    """`<project>/<stack>/` in ECR's alphabet (lowercase; runs of other characters become
    one hyphen), a repository name prefix no other stack of the account picks."""

    def part(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "stack"

    return f"{part(project)}/{part(stack)}/"


def _left_repositories(
    names: Sequence[str], region: str, parent: pulumi.Resource
) -> dict[str, str]:
    """Of `names`, the repositories the region already holds (what an earlier destroy of
    this stack retained, or this stack's own on a later `up`), each with its import id.
    The list lookup answers an empty list when there are none. The id carries the region:
    an import reads by id alone, and the provider takes `<name>@<region>` for a region
    other than its own (terraform-provider-aws internal/provider/sdkv2/region.go,
    importRegion: "Import ID optionally ends with "@<region>"")."""
    listed = found(
        lambda: aws.ecr.get_repositories(region=region, opts=pulumi.InvokeOptions(parent=parent))
    )
    held = set((listed.names if listed else None) or ())
    return {name: f"{name}@{region}" for name in names if name in held}
