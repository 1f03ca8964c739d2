"""`gcp.WorkloadIdentity`: one service account per workload, so nothing runs on stored keys (C6).

The Google Cloud counterpart of `aws.WorkloadIdentity`. Training, inference and notebook
workloads each get a service account that starts with no roles; the components that own
the data grant it (`dataset.grant_read(identity.member("training"))`). No service account
key is ever created: VMs and notebooks run as their account through the metadata server,
GKE pods through Workload Identity Federation for GKE, and GitHub Actions through a
workload identity pool whose provider admits one repository's chosen branches and
environments.

GKE pods reach their account by impersonation (`roles/iam.workloadIdentityUser` on the
account for `serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>]`) by default: it
works with every Google API. `kubernetes_mode="principal"` instead grants the project roles
to the Kubernetes service account's own principal
(`principal://iam.googleapis.com/projects/<NUMBER>/locations/global/workloadIdentityPools/
<project>.svc.id.goog/subject/ns/<ns>/sa/<ksa>`), with no account in between; not every
Google API accepts principal identifiers yet (GKE docs, "Authenticate to Google Cloud APIs
from GKE workloads", supported products and limitations), which is why it is not the
default.

Workload identity pools and providers are soft-deleted for 30 days on delete, and their ids
stay reserved meanwhile: the ids carry `id_suffix`, so a stack destroyed and brought up
again within 30 days either undeletes them or moves to a new suffix
(docs/components/gcp/workload-identity.md says how).
"""

from __future__ import annotations

import re
from typing import Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator

from aistack import _github
from aistack._adopt import adopting, found
from aistack.config import AistackModel, Governance
from aistack.errors import ConfigError, Problem, Problems
from aistack.gcp._base import child_opts, resource_id_from, scoped_id
from aistack.gcp.project_services import ProjectServices

__all__ = [
    "BASIC_ROLES",
    "DEFAULT_WORKLOADS",
    "GithubActions",
    "KubernetesServiceAccount",
    "Workload",
    "WorkloadIdentity",
    "WorkloadIdentityArgs",
    "account_id_for",
    "github_attribute_condition",
]

TOKEN = "aistack:index:GcpWorkloadIdentity"

IAM_API = "iam.googleapis.com"
CREDENTIALS_API = "iamcredentials.googleapis.com"
STS_API = "sts.googleapis.com"
APIS = (IAM_API, CREDENTIALS_API, STS_API)

GITHUB_ISSUER = f"https://{_github.ISSUER}"
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
#: The basic (formerly "primitive") roles: thousands of permissions across every service
#: (IAM docs, "Basic roles"); never for a workload.
BASIC_ROLES = ("roles/owner", "roles/editor", "roles/viewer")
#: Pools and providers stay soft-deleted, their ids reserved, this long (pulumi-gcp
#: WorkloadIdentityPool `state` docstring: "permanently deleted after approximately 30
#: days"; terraform-provider-google#14191, pulumi-gcp#1149).
SOFT_DELETE_DAYS = 30

#: IAM API, serviceAccounts.create: account ids are 6-30 characters matching
#: [a-z]([-a-z0-9]*[a-z0-9]) (RFC 1035).
ACCOUNT_ID = re.compile(r"^[a-z](?:[-a-z0-9]*[a-z0-9])?$")
ACCOUNT_ID_MIN, ACCOUNT_ID_MAX = 6, 30
#: Pool and provider ids: 4-32 characters of [a-z0-9-], `gcp-` reserved (pulumi-gcp
#: `workload_identity_pool_id` / `workload_identity_pool_provider_id` docstrings).
POOL_ID = re.compile(r"^[a-z0-9-]{4,32}$")
POOL_ID_MAX = 32
#: `google.subject` "cannot exceed 127 characters" (pulumi-gcp attribute_mapping docstring).
SUBJECT_MAX = 127

_SLUG = r"^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$"
_K8S_LABEL = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
_K8S_SUBDOMAIN = r"^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$"
_ROLE = re.compile(
    r"^(?:roles/[A-Za-z0-9_.]+|(?:projects|organizations)/[^/]+/roles/[A-Za-z0-9_.]+)$"
)


def account_id_for(prefix: str, workload: str) -> str:
    """`<prefix>-<workload>-<stack digest>` as a service account id (6-30 characters):
    account ids are unique in the project, and its other stacks pick theirs the same way
    (aistack.contracts.naming). A long name is cut, never the digest."""
    return scoped_id(f"{prefix}-{workload}", limit=ACCOUNT_ID_MAX)


def _shortened_id(base: str, suffix: str) -> str:
    """`<base>-<stack digest>-<suffix>` within the 32 characters of a pool id."""
    return f"{scoped_id(base, limit=POOL_ID_MAX - len(suffix) - 1)}-{suffix}"


# ---- arguments -------------------------------------------------------------------------------


class KubernetesServiceAccount(AistackModel):
    """A Kubernetes service account whose pods act as the workload (GKE Workload Identity)."""

    namespace: str = Field(pattern=_K8S_LABEL, description="Namespace of the service account.")
    service_account: str = Field(
        pattern=_K8S_SUBDOMAIN, description="Name of the Kubernetes service account."
    )

    def impersonator(self, project: str) -> str:
        """The IAM member GKE presents for this service account when it impersonates."""
        return f"serviceAccount:{project}.svc.id.goog[{self.namespace}/{self.service_account}]"


class Workload(AistackModel):
    """One service account, and who may act as it."""

    name: str = Field(
        pattern=_SLUG,
        description="The workload, e.g. 'training': a slug unique among the workloads. The "
        "account id is '<accountPrefix>-<name>' (shortened with a hash past 30 characters).",
    )
    account_id: str | None = Field(
        None,
        description="Explicit service account id (6-30 characters, [a-z]([-a-z0-9]*[a-z0-9])); "
        "default: derived from accountPrefix and the name.",
    )
    display_name: str | None = Field(
        None, max_length=100, description="Console name; default 'aistack <workload>'."
    )
    description: str = Field(
        "",
        description="What runs as the account (at most 256 bytes, the IAM API's limit).",
    )
    kubernetes_service_accounts: tuple[KubernetesServiceAccount, ...] = Field(
        (),
        description="GKE service accounts whose pods act as this workload. Default: none.",
    )
    project_roles: tuple[str, ...] = Field(
        (),
        description="Predefined or custom roles granted on the project, e.g. "
        "'roles/logging.logWriter'. Default: none; data access comes from the components "
        "that own the data. Basic roles (owner, editor, viewer) are refused.",
    )

    @field_validator("account_id")
    @classmethod
    def _account_id_is_valid(cls, account_id: str | None) -> str | None:
        if account_id is not None and not (
            ACCOUNT_ID_MIN <= len(account_id) <= ACCOUNT_ID_MAX and ACCOUNT_ID.match(account_id)
        ):
            raise ValueError(
                f"{account_id!r} is not a service account id. Fix: use 6-30 lowercase "
                "letters, digits and hyphens, starting with a letter and not ending with a "
                "hyphen, e.g. 'ml-training'."
            )
        return account_id

    @field_validator("description")
    @classmethod
    def _description_fits(cls, description: str) -> str:
        if len(description.encode()) > 256:
            raise ValueError(
                "a service account description holds at most 256 bytes. Fix: shorten it."
            )
        return description

    @field_validator("project_roles")
    @classmethod
    def _roles_are_scoped(cls, roles: tuple[str, ...]) -> tuple[str, ...]:
        basic = [r for r in roles if r in BASIC_ROLES]
        if basic:
            raise ValueError(
                f"{basic}: basic roles grant thousands of permissions on every service "
                "(checklist C6). Fix: grant the predefined roles the workload needs, e.g. "
                "'roles/logging.logWriter', and data access through the owning component."
            )
        bad = [r for r in roles if not _ROLE.match(r)]
        if bad:
            raise ValueError(
                f"{bad} are not role names. Fix: use 'roles/<service>.<role>' or "
                "'projects/<project>/roles/<custom role>'."
            )
        if len(set(roles)) != len(roles):
            raise ValueError("a role is listed twice. Fix: list each role once.")
        return roles


#: training (GPU VMs or GKE training pods), inference (serving), notebook (Workbench).
DEFAULT_WORKLOADS: tuple[Workload, ...] = (
    Workload(name="training", description="aistack training nodes and jobs"),
    Workload(name="inference", description="aistack inference servers"),
    Workload(name="notebook", description="aistack notebooks"),
)


class GithubActions(_github.GithubRepoRef):
    """A CI service account GitHub Actions can act as, for one repository's refs."""

    repository: str = Field(
        description="'owner/name' of the one repository whose workflows may sign in, spelt "
        "as GitHub shows it (the claims are compared exactly). No wildcards."
    )
    repository_owner_id: str | None = Field(
        None,
        pattern=r"^[0-9]{1,20}$",
        description="The owner's numeric GitHub id (`gh api users/<owner> --jq .id`). When "
        "set it is pinned too, so an owner name freed and re-registered by someone else "
        "cannot sign in. Recommended.",
    )
    branches: tuple[str, ...] = Field(
        (),
        description="Branch names (e.g. 'main') whose runs may sign in; matched as sub "
        "'repo:<repository>:ref:refs/heads/<branch>'. No wildcards.",
    )
    environments: tuple[str, ...] = Field(
        (),
        description="GitHub environments (e.g. 'prod') whose jobs may sign in; matched as "
        "sub 'repo:<repository>:environment:<env>'. No wildcards.",
    )
    workload: str = Field(
        "ci", pattern=_SLUG, description="Workload name of the CI service account."
    )
    pool_id: str | None = Field(
        None,
        description="Workload identity pool id before the suffix; default "
        "'<accountPrefix>-github'. 4-32 characters of [a-z0-9-] with the suffix, no 'gcp-'.",
    )
    id_suffix: str = Field(
        "1",
        pattern=r"^[a-z0-9]{1,8}$",
        description="Ends the pool and provider ids. Pools and providers deleted by "
        "`pulumi destroy` keep their ids reserved for 30 days: change the suffix (e.g. '2') "
        "to bring the stack up again meanwhile, or undelete and import them.",
    )

    @property
    def owner(self) -> str:
        return self.repository.split("/", 1)[0]


def github_attribute_condition(github: GithubActions) -> str:
    """The provider's CEL condition: the owner, the repository and one of the chosen
    subjects. GitHub's issuer is shared by every repository on GitHub, so Google requires a
    condition on GitHub providers (IAM docs, "Workload Identity Federation with deployment
    pipelines", Conditions: the API answers 400 "The attribute condition must reference
    one of the provider's claims" without one); the `assertion.sub == 'repo:...'` form is
    also what checkov CKV_GCP_125 looks for."""
    pins = [
        f"assertion.repository_owner == '{github.owner}'",
        f"assertion.repository == '{github.repository}'",
    ]
    if github.repository_owner_id:
        pins.append(f"assertion.repository_owner_id == '{github.repository_owner_id}'")
    subjects = " || ".join(f"assertion.sub == '{s}'" for s in github.subjects())
    pins.append(f"({subjects})")
    return " && ".join(pins)


#: Claims mapped from the GitHub token (GitHub docs, "About security hardening with OpenID
#: Connect", token claims), so bindings and audit logs can name them.
GITHUB_ATTRIBUTE_MAPPING = {
    "google.subject": "assertion.sub",
    "attribute.actor": "assertion.actor",
    "attribute.repository": "assertion.repository",
    "attribute.repository_owner": "assertion.repository_owner",
    "attribute.repository_owner_id": "assertion.repository_owner_id",
    "attribute.ref": "assertion.ref",
}


class WorkloadIdentityArgs(AistackModel):
    """Which workloads get service accounts, and who else may act as them (GKE, CI)."""

    governance: Governance = Field(
        description="Owner, cost centre, environment; required. In prod the pool and "
        "provider are protected: deleting them reserves their ids for 30 days."
    )
    workloads: tuple[Workload, ...] = Field(
        DEFAULT_WORKLOADS,
        description="The service accounts to create, one per workload. Default: training, "
        "inference, notebook, each with no roles.",
    )
    account_prefix: str | None = Field(
        None,
        description="Starts every account id ('<prefix>-<workload>'); default: the "
        "component's name. Account ids are unique per project: give each stack sharing a "
        "project its own prefix.",
    )
    workload_pool_exists: bool = Field(
        False,
        description="A GKE cluster with Workload Identity already exists in the project (e.g. "
        "in another stack), so its pool `<project>.svc.id.goog` exists. Otherwise pass the "
        "cluster as `cluster=`: Kubernetes bindings fail until the pool exists.",
    )
    kubernetes_mode: Literal["impersonation", "principal"] = Field(
        "impersonation",
        description="How GKE pods act as a workload: 'impersonation' (default; the "
        "Kubernetes service account impersonates the workload's account, which works with "
        "every Google API) or 'principal' (projectRoles are granted to the Kubernetes "
        "service account's own principal; some APIs do not accept principals yet).",
    )
    github: GithubActions | None = Field(
        None,
        description="A CI service account for GitHub Actions through a workload identity "
        "pool, with no roles until the caller grants them. Default: none.",
    )

    @field_validator("account_prefix")
    @classmethod
    def _prefix_is_aresource_id_from(cls, prefix: str | None) -> str | None:
        if prefix is not None and not re.match(r"^[a-z](?:[a-z0-9-]{0,22}[a-z0-9])?$", prefix):
            raise ValueError(
                f"{prefix!r} cannot start a service account id. Fix: use 1-24 lowercase "
                "letters, digits and hyphens, starting with a letter, e.g. 'ml'."
            )
        return prefix

    def prefix(self, name: str) -> str:
        return self.account_prefix or resource_id_from(name)

    def accounts(self, name: str) -> dict[str, str]:
        """Workload name to account id, for every workload and the CI account."""
        prefix = self.prefix(name)
        ids = {w.name: w.account_id or account_id_for(prefix, w.name) for w in self.workloads}
        if self.github is not None and self.github.workload not in ids:
            ids[self.github.workload] = account_id_for(prefix, self.github.workload)
        return ids

    def pool_and_provider_ids(self, name: str) -> tuple[str, str]:
        assert self.github is not None
        base = self.github.pool_id or f"{self.prefix(name)}-github"
        return _shortened_id(base, self.github.id_suffix), f"github-{self.github.id_suffix}"

    def problems(self, name: str) -> Problems:
        """Cross-field problems, each at its field path under the component `name`."""
        problems = Problems()
        names = [w.name for w in self.workloads]
        for duplicate in sorted({n for n in names if names.count(n) > 1}):
            problems.add(
                f"{name}.workloads",
                f"workload {duplicate!r} is listed twice.",
                "give each workload its own name.",
            )
        if self.github is not None and self.github.workload in names:
            problems.add(
                f"{name}.github.workload",
                f"{self.github.workload!r} is also a workload: CI would share its account.",
                "name the CI workload differently (default 'ci').",
            )
        prefix = self.prefix(name)
        if self.account_prefix is None and not re.match(r"^[a-z]", prefix):
            problems.add(
                f"{name}.accountPrefix",
                f"the component name {name!r} does not start a service account id.",
                "set accountPrefix, e.g. 'ml'.",
            )
        accounts = self.accounts(name)
        for workload_name, account_id in accounts.items():
            if len(account_id) < ACCOUNT_ID_MIN or not ACCOUNT_ID.match(account_id):
                is_ci = self.github is not None and workload_name == self.github.workload
                problems.add(
                    f"{name}.github.workload" if is_ci else f"{name}.workloads.{workload_name}",
                    f"the derived account id {account_id!r} is not 6-30 characters matching "
                    "[a-z]([-a-z0-9]*[a-z0-9]), as GCP requires.",
                    "set a longer accountPrefix, or the workload's accountId.",
                )
        ids = list(accounts.values())
        for duplicate in sorted({i for i in ids if ids.count(i) > 1}):
            problems.add(
                f"{name}.workloads",
                f"two workloads get the account id {duplicate!r}.",
                "set accountId on one of them.",
            )
        bound: dict[tuple[str, str], str] = {}
        for workload in self.workloads:
            for ksa in workload.kubernetes_service_accounts:
                key = (ksa.namespace, ksa.service_account)
                if key in bound:
                    problems.add(
                        f"{name}.workloads.{workload.name}.kubernetesServiceAccounts",
                        f"{key[0]}/{key[1]} is also bound to {bound[key]!r}: a Kubernetes "
                        "service account acts as one Google service account.",
                        "bind each Kubernetes service account to one workload.",
                    )
                bound.setdefault(key, workload.name)
        if self.github is not None:
            problems.items.extend(self._github_problems(name))
        return problems

    def _github_problems(self, name: str) -> list[Problem]:
        assert self.github is not None
        github = self.github
        found: list[Problem] = []
        if not github.branches and not github.environments:
            found.append(
                Problem(
                    f"{name}.github.branches",
                    "the provider would admit no workflow: neither branches nor "
                    "environments are listed.",
                    "list the protected branches (e.g. ['main']) and/or GitHub environments.",
                )
            )
        for subject in github.subjects():
            if len(subject) > SUBJECT_MAX:
                found.append(
                    Problem(
                        f"{name}.github",
                        f"the subject {subject!r} is longer than the {SUBJECT_MAX} characters "
                        "google.subject holds: its token exchange would fail.",
                        "use a shorter branch or environment name.",
                    )
                )
        pool_id, provider_id = self.pool_and_provider_ids(name)
        for field, value in (("poolId", pool_id), ("idSuffix", provider_id)):
            if not POOL_ID.match(value) or value.startswith("gcp-"):
                found.append(
                    Problem(
                        f"{name}.github.{field}",
                        f"{value!r} is not a workload identity pool or provider id: 4-32 "
                        "characters of [a-z0-9-], not starting with the reserved 'gcp-'.",
                        "set github.poolId to lowercase letters, digits and hyphens.",
                    )
                )
        return found


# ---- the component ----------------------------------------------------------------------------


class WorkloadIdentity(pulumi.ComponentResource):
    """Service accounts per workload, GKE Workload Identity bindings, GitHub Actions OIDC."""

    args: WorkloadIdentityArgs
    accounts: dict[str, gcp.serviceaccount.Account]
    emails: dict[str, pulumi.Output[str]]
    #: `serviceAccount:<email>` per workload: what grants take.
    members: dict[str, pulumi.Output[str]]
    github_pool: gcp.iam.WorkloadIdentityPool | None
    github_provider: gcp.iam.WorkloadIdentityPoolProvider | None
    #: `projects/<NUMBER>/locations/global/workloadIdentityPools/<pool>/providers/<id>`:
    #: the `workload_identity_provider` input of google-github-actions/auth.
    github_provider_name: pulumi.Output[str] | None

    def __init__(
        self,
        name: str,
        args: WorkloadIdentityArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        cluster: pulumi.Resource | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices (its project holds the accounts, and
        every resource here waits for the IAM APIs it enables). `cluster`: the GKE cluster
        (with `workload_identity_config`) whose pool the Kubernetes bindings name; they
        wait for it."""

        def checks(args: WorkloadIdentityArgs) -> None:
            problems = args.problems(name)
            kubernetes = [w.name for w in args.workloads if w.kubernetes_service_accounts]
            if kubernetes and cluster is None and not args.workload_pool_exists:
                # GKE creates the pool `<project>.svc.id.goog` with the first cluster that
                # enables Workload Identity; before that IAM refuses the binding: "Error
                # 400: Identity Pool does not exist (<project>.svc.id.goog)"
                # (terraform-google-kubernetes-engine#916, google/kctf#193).
                problems.add(
                    f"{name}.workloads.{kubernetes[0]}.kubernetesServiceAccounts",
                    "the Kubernetes bindings name the pool <project>.svc.id.goog, which "
                    "exists only once a GKE cluster enables Workload Identity.",
                    "pass the cluster as `cluster=`, or set workloadPoolExists: true when a "
                    "cluster of the project already has it.",
                )
            assert services is not None
            problems.items.extend(services.missing(*APIS, where=name))
            problems.raise_if_any()

        args = WorkloadIdentityArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )[0]
        assert services is not None
        super().__init__(TOKEN, name, {"workloads": [w.name for w in args.workloads]}, opts)
        self.args = args
        self.project = services.project
        self._name = name
        self._services = services
        apis = services.enabling(*APIS)
        self._apis = apis
        self._cluster = [cluster] if cluster is not None else []
        project = self.project
        # The project NUMBER, which principal identifiers name (the pool ids below use the
        # project ID: `<project>.svc.id.goog`).
        self._project_number = gcp.organizations.get_project_output(
            project_id=project, opts=pulumi.InvokeOutputOptions(parent=self, depends_on=apis)
        ).number
        account_ids = args.accounts(name)

        self.accounts = {}
        self._principals: dict[str, list[pulumi.Output[str]]] = {}
        for workload in args.workloads:
            account = self._account(workload.name, account_ids[workload.name], workload)
            principals: list[pulumi.Output[str]] = []
            for ksa in workload.kubernetes_service_accounts:
                key = f"{ksa.namespace}-{ksa.service_account}"
                if args.kubernetes_mode == "impersonation":
                    gcp.serviceaccount.IAMMember(
                        f"{name}-{workload.name}-ksa-{key}",
                        service_account_id=account.name,
                        role=WORKLOAD_IDENTITY_USER,
                        member=ksa.impersonator(project),
                        opts=child_opts(self, depends_on=[*apis, *self._cluster]),
                    )
                else:
                    principals.append(self._kubernetes_principal(ksa))
            self._principals[workload.name] = principals
            for role in workload.project_roles:
                self._project_role(workload.name, role, account.member, "")
                for ksa, principal in zip(
                    workload.kubernetes_service_accounts, principals, strict=False
                ):
                    self._project_role(
                        workload.name, role, principal, f"-{ksa.namespace}-{ksa.service_account}"
                    )

        self.github_pool = None
        self.github_provider = None
        self.github_provider_name = None
        if args.github is not None:
            self._github(args.github, account_ids[args.github.workload])

        self.emails = {w: a.email for w, a in self.accounts.items()}
        self.members = {w: a.member for w, a in self.accounts.items()}
        outputs: dict[str, object] = {"emails": self.emails, "members": self.members}
        if self.github_provider_name is not None:
            outputs["github_provider_name"] = self.github_provider_name
            outputs["github_service_account_email"] = self.emails[args.github.workload]  # type: ignore[union-attr]
        self.register_outputs(outputs)

    def _account(
        self, workload: str, account_id: str, spec: Workload | None
    ) -> gcp.serviceaccount.Account:
        account = gcp.serviceaccount.Account(
            f"{self._name}-{workload}",
            project=self.project,
            account_id=account_id,
            display_name=(spec.display_name if spec else None) or f"aistack {workload}"[:100],
            description=(spec.description if spec else "") or f"aistack workload {workload}",
            opts=child_opts(self, depends_on=self._apis),
        )
        self.accounts[workload] = account
        return account

    def _kubernetes_principal(self, ksa: KubernetesServiceAccount) -> pulumi.Output[str]:
        # GKE docs, "Workload Identity Federation for GKE": the principal of a Kubernetes
        # service account uses the project NUMBER and the pool `<PROJECT_ID>.svc.id.goog`.
        return pulumi.Output.format(
            "principal://iam.googleapis.com/projects/{0}/locations/global/"
            "workloadIdentityPools/{1}.svc.id.goog/subject/ns/{2}/sa/{3}",
            self._project_number,
            self.project,
            ksa.namespace,
            ksa.service_account,
        )

    def _project_role(
        self, workload: str, role: str, member: pulumi.Input[str], key: str
    ) -> gcp.projects.IAMMember:
        role_key = resource_id_from(role.rsplit("/", 1)[-1])
        # A Kubernetes principal (key set) names the cluster's pool: it waits for it.
        waits = [*self._apis, *(self._cluster if key else [])]
        return gcp.projects.IAMMember(
            f"{self._name}-{workload}{key}-{role_key}",
            project=self.project,
            role=role,
            member=member,
            opts=child_opts(self, depends_on=waits),
        )

    def _github(self, github: GithubActions, account_id: str) -> None:
        args = self.args
        pool_id, provider_id = args.pool_and_provider_ids(self._name)
        # A deleted pool or provider holds its id for 30 days and a create of it fails
        # meanwhile (IAM docs, "Manage workload identity pools and providers"), so `destroy`
        # keeps both, and the next `up` of the stack takes them over (aistack._adopt): the
        # id GitHub's workflows name stays valid. A kept pool admits no one: the bindings
        # that let its principals act as the service accounts are deleted with the stack.
        # In prod, deleting them at all takes a deliberate unprotect.
        pool_left, provider_left = self._left_github_pool(pool_id, provider_id)
        guarded = child_opts(
            self,
            depends_on=self._apis,
            protect=args.governance.environment == "prod",
            retain_on_delete=True,
        )
        self.github_pool = gcp.iam.WorkloadIdentityPool(
            f"{self._name}-github-pool",
            project=self.project,
            workload_identity_pool_id=pool_id,
            display_name=f"GitHub {github.owner}"[:32],
            description=f"aistack: GitHub Actions of {github.repository}"[:256],
            opts=adopting(guarded, pool_left),
        )
        self.github_provider = gcp.iam.WorkloadIdentityPoolProvider(
            f"{self._name}-github-provider",
            project=self.project,
            # The pool's short id, not its `id`/`name` paths (pulumi-gcp#1080).
            workload_identity_pool_id=self.github_pool.workload_identity_pool_id,
            workload_identity_pool_provider_id=provider_id,
            display_name=f"GitHub {github.repository}"[:32],
            description=f"aistack: {', '.join(github.subjects())}"[:256],
            attribute_mapping=dict(GITHUB_ATTRIBUTE_MAPPING),
            attribute_condition=github_attribute_condition(github),
            oidc=gcp.iam.WorkloadIdentityPoolProviderOidcArgs(issuer_uri=GITHUB_ISSUER),
            opts=adopting(guarded, provider_left),
        )
        self.github_provider_name = self.github_provider.name
        account = self._account(github.workload, account_id, None)
        # Everything the provider admits carries attribute.repository; the condition has
        # already narrowed it to the chosen branches and environments.
        repository_principals = pulumi.Output.format(
            "principalSet://iam.googleapis.com/projects/{0}/locations/global/"
            "workloadIdentityPools/{1}/attribute.repository/{2}",
            self._project_number,
            self.github_pool.workload_identity_pool_id,
            github.repository,
        )
        self.github_binding = gcp.serviceaccount.IAMMember(
            f"{self._name}-{github.workload}-github",
            service_account_id=account.name,
            role=WORKLOAD_IDENTITY_USER,
            member=repository_principals,
            opts=child_opts(self, depends_on=[*self._apis, self.github_provider]),
        )

    # ---- lookups ---------------------------------------------------------------------------

    def _left_github_pool(self, pool_id: str, provider_id: str) -> tuple[str | None, str | None]:
        """The import ids of the GitHub pool and provider the project already holds (what an
        earlier destroy of this stack kept, or this stack's own on a later `up`); None for
        each it does not. A pool or provider deleted by hand within 30 days is not found
        (the provider's decoder drops a `DELETED` one: resource_iam_workload_identity_pool.go
        returns nil for state DELETED), so its create then fails on the held id: undelete it
        (docs/components/gcp/workload-identity.md)."""
        opts = pulumi.InvokeOptions(parent=self)
        pool_path = f"projects/{self.project}/locations/global/workloadIdentityPools/{pool_id}"
        pool = found(
            lambda: gcp.iam.get_workload_identity_pool(
                project=self.project, workload_identity_pool_id=pool_id, opts=opts
            )
        )
        if pool is None or not getattr(pool, "name", None):
            return None, None
        provider = found(
            lambda: gcp.iam.get_workload_identity_pool_provider(
                project=self.project,
                workload_identity_pool_id=pool_id,
                workload_identity_pool_provider_id=provider_id,
                opts=opts,
            )
        )
        if provider is None or not getattr(provider, "name", None):
            return pool_path, None
        return pool_path, f"{pool_path}/providers/{provider_id}"

    def workloads(self) -> tuple[str, ...]:
        return tuple(self.accounts)

    def service_account(self, workload: str) -> gcp.serviceaccount.Account:
        """The service account of `workload`; ConfigError naming the known ones otherwise."""
        if workload not in self.accounts:
            raise ConfigError(
                f"no workload {workload!r} in WorkloadIdentity {self._name!r}",
                field=f"{self._name}.workloads",
                fix=f"use one of {sorted(self.accounts)}, or add the workload.",
            )
        return self.accounts[workload]

    def email(self, workload: str) -> pulumi.Output[str]:
        return self.service_account(workload).email

    def member(self, workload: str) -> pulumi.Output[str]:
        """`serviceAccount:<email>`: what `grant_read`/`grant_write` of other components take."""
        return self.service_account(workload).member

    def kubernetes_principals(self, workload: str) -> list[pulumi.Output[str]]:
        """The `principal://` members of the workload's Kubernetes service accounts
        (kubernetesMode 'principal'): grant data access to these as well as `member()`."""
        self.service_account(workload)
        return list(self._principals.get(workload, []))

    def kubernetes_annotations(self, workload: str) -> dict[str, pulumi.Output[str]]:
        """The annotation a Kubernetes service account needs to impersonate the workload's
        account (GKE docs: `iam.gke.io/gcp-service-account`)."""
        return {"iam.gke.io/gcp-service-account": self.email(workload)}
