"""`gcp.ContainerRegistry`: a private Artifact Registry Docker repository, images by digest.

The Google Cloud counterpart of `aws.ContainerRegistry` (checklist E1), with the same
promises: a tag, once pushed, names one build forever (immutable tags); every pushed image
is scanned for vulnerabilities; images are encrypted under a rotating customer key; cleanup
keeps the newest releases and drops untagged leftovers, and really deletes (no dry run);
the repository lives in one region inside the allowed regions (C4) and survives
`pulumi destroy` unless `allow_destroy_with_images` says otherwise. Workloads take images
from it by digest through `image_ref()`.

One Artifact Registry repository holds many images (`<region>-docker.pkg.dev/<project>/
<repository>/<image>`), where ECR has a repository per image: so one repository per
component, and grants on the whole repository. Why each setting:
docs/components/gcp/container-registry.md.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator

from aistack._adopt import adopting, found
from aistack.config import AistackModel, Governance
from aistack.contracts.images import check_tag_prefixes, normalize_digest, require_digest
from aistack.errors import ConfigError, Problems
from aistack.gcp._base import (
    child_opts,
    grant_key,
    labels_for,
    resource_id_from,
    scoped_id,
    stateful_opts,
)
from aistack.gcp._kms import KMS_ENCRYPTER, stack_key
from aistack.gcp.project_services import ProjectServices

__all__ = ["ContainerRegistry", "ContainerRegistryArgs", "cleanup_policies", "registry_url"]

ARTIFACT_REGISTRY_API = "artifactregistry.googleapis.com"
KMS_API = "cloudkms.googleapis.com"
SCANNING_API = "containerscanning.googleapis.com"
APIS = (ARTIFACT_REGISTRY_API, KMS_API, SCANNING_API)

#: Artifact Registry predefined roles (IAM docs, "Artifact Registry roles"): reader pulls
#: (artifactregistry.repositories.downloadArtifacts, ...); writer also pushes
#: (uploadArtifacts) and tags, but cannot delete versions (that is repoAdmin).
READ_ROLE = "roles/artifactregistry.reader"
WRITE_ROLE = "roles/artifactregistry.writer"

#: Artifact Registry repository ids: lowercase letters, digits and hyphens, starting with a
#: letter, ending with a letter or digit, at most 63 characters (Artifact Registry docs,
#: "Create standard repositories").
REPOSITORY_ID = re.compile(r"^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$")
#: An image path under the repository: Docker path components (OCI distribution spec,
#: repository name grammar), no tag and no digest.
_IMAGE_NAME = re.compile(
    r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$"
)
_KMS_KEY = re.compile(
    r"^projects/[^/]+/locations/(?P<location>[^/]+)/keyRings/[^/]+/cryptoKeys/[^/]+$"
)
_DAY = 86400


def cleanup_policies(
    keep_recent_versions: int,
    release_tag_prefixes: tuple[str, ...],
    release_expiry_days: int,
    untagged_expiry_days: int,
) -> list[gcp.artifactregistry.RepositoryCleanupPolicyArgs]:
    """The repository's cleanup policies: keep the newest N versions of every image, delete
    release-tagged versions older than R days beyond those, delete untagged versions after
    U days, leave every other tagged version alone.

    Artifact Registry applies keep policies over delete policies ("Cleanup policy
    overview": a version matching both is kept), and keep policies alone delete nothing,
    so the keep-newest policy only guards what the delete policies would remove.
    """
    policy = gcp.artifactregistry.RepositoryCleanupPolicyArgs
    condition = gcp.artifactregistry.RepositoryCleanupPolicyConditionArgs
    return [
        policy(
            id="keep-newest",
            action="KEEP",
            most_recent_versions=gcp.artifactregistry.RepositoryCleanupPolicyMostRecentVersionsArgs(
                keep_count=keep_recent_versions
            ),
        ),
        policy(
            id="delete-old-releases",
            action="DELETE",
            condition=condition(
                tag_state="TAGGED",
                tag_prefixes=list(release_tag_prefixes),
                # Durations are seconds with an "s" suffix (Artifact Registry REST API,
                # CleanupPolicyCondition.olderThan is a google.protobuf.Duration).
                older_than=f"{release_expiry_days * _DAY}s",
            ),
        ),
        policy(
            id="delete-untagged",
            action="DELETE",
            condition=condition(tag_state="UNTAGGED", older_than=f"{untagged_expiry_days * _DAY}s"),
        ),
    ]


class ContainerRegistryArgs(AistackModel):
    """Arguments of `ContainerRegistry`; every field documented with its default and why."""

    region: str = Field(
        description="Region of the repository, e.g. 'europe-west4': in governance."
        "allowed_regions (C4), and where the GPU nodes pull from. Multi-regions ('us', "
        "'europe', 'asia') are refused: they place images in regions nobody chose."
    )
    governance: Governance
    repository_id: str | None = Field(
        None,
        description="The repository id (lowercase letters, digits, hyphens; 63 characters "
        "at most); default: the component's name and the stack's digest, as ids are unique "
        "per project and region and the project's other stacks pick theirs.",
    )
    description: str = Field(
        "aistack container images", max_length=1000, description="Shown in the console."
    )
    keep_recent_versions: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Newest versions of each image never deleted by cleanup (default 20): "
        "enough to roll back months of releases, few enough that storage stays flat.",
    )
    release_tag_prefixes: tuple[str, ...] = Field(
        ("v", "release-"),
        min_length=1,
        max_length=20,
        description="Tag prefixes that mark releases (default 'v', 'release-'): versions "
        "so tagged are deleted once older than releaseExpiryDays unless among the newest "
        "keepRecentVersions. Versions with other tags are never deleted.",
    )
    release_expiry_days: int = Field(
        90,
        ge=1,
        le=3650,
        description="Age after which a release beyond the newest keepRecentVersions is "
        "deleted (default 90 days).",
    )
    untagged_expiry_days: int = Field(
        7,
        ge=1,
        le=3650,
        description="Days an untagged version (build leftovers, superseded pushes) is kept "
        "(default 7): long enough to finish a rollout that used one by digest.",
    )
    kms_key_name: str | None = Field(
        None,
        description="Encrypt with this existing Cloud KMS key (its id, in the repository's "
        "region); default: a new key ring and key, rotated every 90 days. Artifact Registry "
        "fixes the key at repository creation.",
    )
    allow_unscanned: bool = Field(
        False,
        description="Turn vulnerability scanning off for this repository. Off: every "
        "pushed image is scanned (Artifact Analysis bills per scanned image).",
    )
    allow_destroy_with_images: bool = Field(
        False,
        description="Let `pulumi destroy` delete the repository with every image. Off: the "
        "repository and its key are retained, deletion_policy PREVENT (protected in prod).",
    )

    @field_validator("repository_id")
    @classmethod
    def _repository_id_is_valid(cls, repository_id: str | None) -> str | None:
        if repository_id is not None and not REPOSITORY_ID.match(repository_id):
            raise ValueError(
                f"{repository_id!r} is not an Artifact Registry repository id. Fix: use 1-63 "
                "lowercase letters, digits and hyphens, starting with a letter and ending "
                "with a letter or digit, e.g. 'ml-images'."
            )
        return repository_id

    @field_validator("release_tag_prefixes")
    @classmethod
    def _prefixes_are_tags(cls, prefixes: tuple[str, ...]) -> tuple[str, ...]:
        return check_tag_prefixes(prefixes)

    @field_validator("kms_key_name")
    @classmethod
    def _key_is_a_key_name(cls, key: str | None) -> str | None:
        if key is not None and not _KMS_KEY.match(key):
            raise ValueError(
                f"{key!r} is not a Cloud KMS key id. Fix: pass 'projects/<p>/locations/"
                "<region>/keyRings/<ring>/cryptoKeys/<key>'."
            )
        return key


class ContainerRegistry(pulumi.ComponentResource):
    """A private Artifact Registry Docker repository: immutable tags, scanned, CMEK."""

    args: ContainerRegistryArgs
    repository: gcp.artifactregistry.Repository
    repository_id: pulumi.Output[str]
    repository_url: pulumi.Output[str]
    kms_key_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: ContainerRegistryArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices (its project is the repository's, and
        every resource here waits for the APIs it enables)."""

        def checks(args: ContainerRegistryArgs) -> None:
            problems = Problems()
            found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
            if found:
                problems.items.append(found)
            assert services is not None
            problems.items.extend(services.missing(*APIS, where=name))
            if args.kms_key_name:
                location = _KMS_KEY.match(args.kms_key_name)["location"]  # type: ignore[index]
                if location != args.region:
                    problems.add(
                        f"{name}.kmsKeyName",
                        f"the key is in {location}; Artifact Registry encrypts only with a "
                        f"key in the repository's location ({args.region}).",
                        f"pass a key in {args.region}, or leave kmsKeyName unset for a new key.",
                    )
            repository_id = args.repository_id or _default_repository_id(name)
            if args.repository_id is None and not REPOSITORY_ID.match(repository_id):
                problems.add(
                    f"{name}.repositoryId",
                    f"the component name {name!r} does not make a repository id "
                    f"({repository_id!r}).",
                    "set repositoryId, e.g. 'ml-images'.",
                )
            problems.raise_if_any()

        args = ContainerRegistryArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )[0]
        assert services is not None
        super().__init__("aistack:index:GcpContainerRegistry", name, {"region": args.region}, opts)
        self.args = args
        self.region = args.region
        self.project = services.project
        self._name = name
        self._services = services
        labels = labels_for(args.governance, workload="images")
        apis = services.enabling(*APIS)
        deletion_policy = "DELETE" if args.allow_destroy_with_images else "PREVENT"

        def keep(*depends_on: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
            # The key, its grant and the repository stay with the images on destroy.
            return stateful_opts(
                self,
                args.governance,
                allow_destroy=args.allow_destroy_with_images,
                depends_on=[*apis, *depends_on],
                **options,
            )

        repository_id = args.repository_id or _default_repository_id(name)
        # A repository this stack left on an earlier destroy (retained with its images) is
        # taken over by the next `up`, not met with a 409 (aistack._adopt).
        left = _left_repository(self.project, args.region, repository_id, self)
        self.key_ring, self.crypto_key, key_id = stack_key(
            name,
            args.kms_key_name,
            project=self.project,
            location=args.region,
            labels=labels,
            deletion_policy=deletion_policy,
            opts=keep,
        )
        # The Artifact Registry service agent (service-<NUMBER>@gcp-sa-artifactregistry.
        # iam.gserviceaccount.com) encrypts layers for the repository. It is created on
        # first use, so ServiceIdentity makes it exist before the grant names it (a grant
        # to a missing agent fails: "Service account ... does not exist").
        self.service_agent = gcp.projects.ServiceIdentity(
            f"{name}-agent",
            project=self.project,
            service=ARTIFACT_REGISTRY_API,
            opts=child_opts(self, depends_on=apis),
        )
        # CMEK: the agent must hold Encrypter/Decrypter on the key BEFORE the repository
        # names it, or the create fails (Artifact Registry docs, "Enabling customer-managed
        # encryption keys").
        self.key_grant = gcp.kms.CryptoKeyIAMMember(
            f"{name}-key-agent",
            crypto_key_id=key_id,
            role=KMS_ENCRYPTER,
            member=self.service_agent.member,
            opts=keep(),
        )
        self.kms_key_name = key_id

        self.repository = gcp.artifactregistry.Repository(
            f"{name}-repository",
            project=self.project,
            location=args.region,
            repository_id=repository_id,
            description=args.description,
            format="DOCKER",
            mode="STANDARD_REPOSITORY",
            # "prevents all tags from being modified, moved or deleted. This does not
            # prevent tags from being created" (pulumi-gcp RepositoryDockerConfigArgs
            # docstring): 'v1.4' is one build for the repository's life.
            docker_config=gcp.artifactregistry.RepositoryDockerConfigArgs(immutable_tags=True),
            cleanup_policies=cleanup_policies(
                args.keep_recent_versions,
                args.release_tag_prefixes,
                args.release_expiry_days,
                args.untagged_expiry_days,
            ),
            # Dry run only logs what cleanup would delete: storage would grow forever.
            cleanup_policy_dry_run=False,
            # INHERITED scans as the project does: on, with containerscanning enabled.
            vulnerability_scanning_config=gcp.artifactregistry.RepositoryVulnerabilityScanningConfigArgs(
                enablement_config="DISABLED" if args.allow_unscanned else "INHERITED"
            ),
            kms_key_name=key_id,
            labels=labels,
            deletion_policy=deletion_policy,
            # A repository's key is fixed at creation: one taken over keeps the key it was
            # created with (kept too) rather than being replaced for the new one.
            opts=adopting(keep(self.key_grant, ignore_changes=["kmsKeyName"]), left),
        )
        self.repository_id = self.repository.id
        # `<location>-docker.pkg.dev/<project>/<repository>`: what docker push and pull use.
        self.repository_url = self.repository.registry_uri
        self.register_outputs(
            {
                "repository_id": self.repository_id,
                "repository_url": self.repository_url,
                "kms_key_name": self.kms_key_name,
                "region": args.region,
            }
        )

    # ---- images --------------------------------------------------------------------------

    def image(self, name: str, digest: pulumi.Input[str]) -> pulumi.Output[str]:
        """`<repository url>/<name>@sha256:<digest>`: how a workload references an image.

        `name` is the image's path in the repository, without tag or digest: a tag can name
        another build tomorrow (immutable tags stop moving it here, not in a copy). `digest`
        may be an Output (a build's digest); a plain string is checked now.
        """
        field = f"{self._name}.image"
        if not isinstance(name, str) or not _IMAGE_NAME.match(name):
            raise ConfigError(
                f"{name!r} is not an image name in the repository"
                + (" (it carries a tag or digest)" if ":" in str(name) or "@" in str(name) else ""),
                field=f"{field}.name",
                fix="pass the image path only, e.g. 'trainer', and its digest separately.",
            )
        if isinstance(digest, str):
            digest = normalize_digest(digest, f"{field}.digest")
        return pulumi.Output.all(self.repository_url, digest).apply(
            lambda resolved: require_digest(f"{resolved[0]}/{name}@{resolved[1]}", field)
        )

    def image_ref(self, name: str, digest: pulumi.Input[str]) -> pulumi.Output[str]:
        """Deprecated: `image` (the name both clouds' registries use); goes next minor."""
        warnings.warn(
            "gcp.ContainerRegistry.image_ref is now image()", DeprecationWarning, stacklevel=2
        )
        return self.image(name, digest)

    # ---- grants --------------------------------------------------------------------------

    def grant_pull(
        self, member: pulumi.Input[str], *, name: str | None = None
    ) -> gcp.artifactregistry.RepositoryIamMember:
        """Let `member` ("serviceAccount:...") pull images from this repository only."""
        return self._grant(member, READ_ROLE, "read", name, "grant_pull")

    def grant_push(
        self, member: pulumi.Input[str], *, name: str | None = None
    ) -> gcp.artifactregistry.RepositoryIamMember:
        """Let `member` push (and pull) images to this repository; never delete them."""
        return self._grant(member, WRITE_ROLE, "write", name, "grant_push")

    def grant_read(
        self, member: pulumi.Input[str], *, name: str | None = None
    ) -> gcp.artifactregistry.RepositoryIamMember:
        """Deprecated: `grant_pull`, as on AWS; goes next minor."""
        warnings.warn(
            "gcp.ContainerRegistry.grant_read is now grant_pull()",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.grant_pull(member, name=name)

    def grant_write(
        self, member: pulumi.Input[str], *, name: str | None = None
    ) -> gcp.artifactregistry.RepositoryIamMember:
        """Deprecated: `grant_push`, as on AWS; goes next minor."""
        warnings.warn(
            "gcp.ContainerRegistry.grant_write is now grant_push()",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.grant_push(member, name=name)

    def _grant(
        self, member: pulumi.Input[str], role: str, verb: str, name: str | None, method: str
    ) -> gcp.artifactregistry.RepositoryIamMember:
        # `verb` is in the grant's resource name, and so in state: "read" and "write" stay.
        if name is None:
            name = grant_key(member, f"{self._name}.{method}.name")
        return gcp.artifactregistry.RepositoryIamMember(
            f"{self._name}-{verb}-{name}",
            project=self.project,
            location=self.region,
            repository=self.repository.name,
            role=role,
            member=member,
            opts=child_opts(self, depends_on=self._services.enabling(ARTIFACT_REGISTRY_API)),
        )


def _left_repository(
    project: str, location: str, repository_id: str, parent: pulumi.Resource
) -> str | None:
    """The import id of repository `repository_id` if the project already holds it (what
    an earlier destroy of this stack retained, or this stack's own on a later `up`), else
    None. The list lookup answers an empty list when there is none."""
    listed = found(
        lambda: gcp.artifactregistry.get_repositories(
            location=location, project=project, opts=pulumi.InvokeOptions(parent=parent)
        )
    )
    held = {r.repository_id for r in (listed.repositories if listed else None) or ()}
    if repository_id not in held:
        return None
    return f"projects/{project}/locations/{location}/repositories/{repository_id}"


def _default_repository_id(name: str) -> str:
    return scoped_id(resource_id_from(name), limit=63)


def registry_url(name: str, *, project: str, region: str, repository_id: str | None = None) -> str:
    """`<region>-docker.pkg.dev/<project>/<repository>`: the address docker uses for the
    repository `ContainerRegistry(name, ...)` creates, known before it exists, so a
    program can name its images in it (`f"{url}/trainer@sha256:..."`) though the id ends
    in the stack's digest."""
    return f"{region}-docker.pkg.dev/{project}/{repository_id or _default_repository_id(name)}"
