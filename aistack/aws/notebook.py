"""`aws.Notebook`: a SageMaker Studio domain whose notebooks shut themselves down when idle.

Notebooks are where idle GPU hours hide: a JupyterLab space left open over a weekend bills
every hour of it. Studio has built-in idle shutdown for JupyterLab and Code Editor; this
component turns it on for every user and every shared space, with a default timeout and
bounds users can tune within but cannot switch off (checklist C5).

The domain is VPC-only: every byte, to AWS APIs and to the internet, leaves through the
VPC it is given (the Network component's notebook tier, or any private subnets), so the
network's egress choice (interface endpoints or a NAT gateway) decides what notebooks can
reach. The home directories live on the domain's EFS volume, encrypted with a customer KMS
key that rotates yearly, and both outlive the domain: deleting the domain keeps the data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, cast

import pulumi
import pulumi_aws as aws
from pulumi_aws import sagemaker as sm
from pydantic import AfterValidator, Field, field_validator

from aistack.aws._base import child_opts, stack_id, stateful_opts, tags_for
from aistack.aws._kms import customer_key
from aistack.aws.workload_identity import studio_execution_policy
from aistack.config import AistackModel, Governance
from aistack.contracts.aws import AwsNetwork
from aistack.errors import Problems

__all__ = [
    "DEFAULT_INSTANCE_TYPE",
    "DEFAULT_INSTANCE_TYPES",
    "Notebook",
    "NotebookArgs",
    "TOKEN",
    "is_accelerated",
]

TOKEN = "aistack:index:AwsNotebook"
WORKLOAD = "notebook"
#: The cheapest general-purpose Studio instance: enough to edit code, read data samples and
#: submit training jobs. GPUs are chosen per space by the user when the work needs one.
DEFAULT_INSTANCE_TYPE = "ml.t3.medium"
#: What users may start apps on unless configured otherwise: small CPU types and one GPU.
DEFAULT_INSTANCE_TYPES = ("ml.t3.medium", "ml.t3.large", "ml.m5.xlarge", "ml.g5.xlarge")
#: SageMaker refuses idle timeouts and bounds below an hour (API IdleSettings: 60-525600).
MIN_IDLE_MINUTES = 60
#: A day: anything longer is not an idle timeout but a way to leave notebooks on.
MAX_IDLE_MINUTES = 1440
#: One security group slot is taken by the NFS group SageMaker adds for the home EFS volume.
MAX_SECURITY_GROUPS = 4
#: CreateDomain accepts 1-16 subnets.
MAX_SUBNETS = 16

_SLUG = r"^[a-z0-9](?:-?[a-z0-9])*$"
_DOMAIN_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
_INSTANCE_TYPE = r"^ml\.[a-z0-9-]+\.[a-z0-9]+$"
# Accelerated families: NVIDIA (g, p), Trainium, Inferentia, Gaudi (dl).
_ACCELERATED = re.compile(r"^ml\.(?:g|p|trn|inf|dl)\d")
_LITERAL_IDS = {
    "vpcId": re.compile(r"^vpc-[0-9a-f]{8,17}$"),
    "subnetIds": re.compile(r"^subnet-[0-9a-f]{8,17}$"),
    "securityGroupIds": re.compile(r"^sg-[0-9a-f]{8,17}$"),
    "executionRoleArn": re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$"),
}


def is_accelerated(instance_type: str) -> bool:
    """True for GPU and AI-accelerator SageMaker instance types (ml.g5.xlarge, ml.p4d...)."""
    return bool(_ACCELERATED.match(instance_type))


def _an_input(value: Any) -> Any:
    if isinstance(value, str | pulumi.Output):
        return value
    raise ValueError(
        f"expected a string or a pulumi Output, got {type(value).__name__}. Fix: pass the "
        "id itself, or the Output another component exposes (e.g. network.vpc_id)."
    )


#: A string known now, or an Output another component will resolve (an id, an ARN).
InputStr = Annotated[Any, AfterValidator(_an_input)]


class NotebookArgs(AistackModel):
    """A VPC-only Studio domain, its users, and how long an idle notebook may live."""

    governance: Governance = Field(
        description="Owner, cost centre and allowed regions; required. Tags the domain, key "
        "and profiles, and the region must be one of its allowedRegions (C4)."
    )
    region: str = Field(
        description="Region of the domain and its home EFS volume; required and explicit, "
        "never the provider's default: it must be in governance.allowedRegions (C4) and "
        "should be the region of the data notebooks read (D2)."
    )
    users: tuple[str, ...] = Field(
        min_length=1,
        description="One Studio user profile per entry: lowercase slugs (e.g. 'ana', "
        "'data-team'), unique. Required: a domain nobody can open is dead weight.",
    )
    vpc_id: InputStr | None = Field(
        None,
        description="VPC the domain runs in (e.g. network.vpc_id). Required, here or as the "
        "`vpc_id=` keyword of the component.",
    )
    subnet_ids: tuple[InputStr, ...] | None = Field(
        None,
        description="Private subnets for the apps and the EFS mount targets, 1-16 (e.g. "
        "network.subnet_ids('notebook')). Required, here or as a keyword. Private only: "
        "VPC-only domains refuse public subnets. Give two or more zones so one zone's outage "
        "does not lock everyone out of their home directory.",
    )
    security_group_ids: tuple[InputStr, ...] | None = Field(
        None,
        description="Security groups of every app, 1-4 (e.g. [network.security_group_id("
        "'notebook')]). Required, here or as a keyword. They must allow HTTPS out to the "
        "VPC's endpoints or NAT; SageMaker adds its own group for NFS to the home volume.",
    )
    execution_role_arn: InputStr | None = Field(
        None,
        description="Role every user's and shared space's apps run as (e.g. "
        "identity.role_arn('notebook')). Required, here or as a keyword; it must trust "
        "sagemaker.amazonaws.com.",
    )
    kms_key_id: InputStr | None = Field(
        None,
        description="Customer KMS key (id or ARN) for the home EFS volume and space EBS "
        "volumes. Default: a new key with yearly rotation, retained like the data it guards.",
    )
    idle_timeout_minutes: int = Field(
        60,
        ge=MIN_IDLE_MINUTES,
        le=MAX_IDLE_MINUTES,
        description="Minutes a JupyterLab or Code Editor app may sit idle (no kernel or "
        "terminal activity) before Studio shuts it down (C5). Default 60: long enough for a "
        "lunch break, short enough that a forgotten GPU costs an hour, not a weekend. "
        "SageMaker's minimum is 60.",
    )
    max_idle_timeout_minutes: int = Field(
        240,
        ge=MIN_IDLE_MINUTES,
        le=MAX_IDLE_MINUTES,
        description="Longest idle timeout a user may choose for their own space; the "
        "shortest is 60. Default 240, the most AIS-C5-01 accepts: users tune the timeout "
        "within bounds and cannot turn idle shutdown off.",
    )
    default_instance_type: str = Field(
        DEFAULT_INSTANCE_TYPE,
        pattern=_INSTANCE_TYPE,
        description="Instance a new JupyterLab or Code Editor space starts on. Default "
        "ml.t3.medium (about $0.05/hour); users pick a GPU per space when the work needs one.",
    )
    instance_types: tuple[Annotated[str, Field(pattern=_INSTANCE_TYPE)], ...] = Field(
        DEFAULT_INSTANCE_TYPES,
        min_length=1,
        description="The instance types users may start apps on: the execution role's "
        "CreateApp is conditioned on sagemaker:InstanceTypes. Must include "
        "default_instance_type. Default: ml.t3.medium, ml.t3.large, ml.m5.xlarge and one "
        "single-GPU type, ml.g5.xlarge; add larger GPUs deliberately.",
    )
    grant_studio_permissions: bool = Field(
        True,
        description="Attach to the execution role what Studio users need in this domain "
        "(aws.workload_identity.studio_execution_policy): their own spaces and apps, on "
        "instance_types only. Off: the role's owner grants it; without it a user can open "
        "the domain but launch nothing.",
    )
    allow_gpu_default_instance: bool = Field(
        False,
        description="Allow a GPU or accelerator type as default_instance_type. Off: every "
        "space a user opens would start on a GPU, billed from the first minute.",
    )
    allow_docker_access: bool = Field(
        False,
        description="Let spaces build and run Docker containers. Off: Docker in a space runs "
        "with privileges beyond the notebook's and pulls images from outside the review path.",
    )
    domain_name: str | None = Field(
        None,
        description="Physical domain name (letters, digits, hyphens; at most 63). Default: "
        "'<project>-<stack>-<name>', shortened to fit.",
    )
    allow_destroy_with_data: bool = Field(
        False,
        description="Let `pulumi destroy` delete the home EFS volume (retention 'Delete'), the "
        "domain and its KMS key. Off: the volume is retained when the domain goes, and the "
        "domain and key are retained (and protected in prod).",
    )

    @field_validator("users")
    @classmethod
    def _users_are_unique_slugs(cls, users: tuple[str, ...]) -> tuple[str, ...]:
        bad = [user for user in users if not re.fullmatch(_SLUG, user) or len(user) > 63]
        if bad:
            raise ValueError(
                f"{bad} are not user slugs. Fix: use lowercase letters, digits and single "
                "hyphens, at most 63 characters (e.g. 'ana' or 'data-team')."
            )
        duplicates = sorted({user for user in users if users.count(user) > 1})
        if duplicates:
            raise ValueError(
                f"{duplicates} listed more than once. Fix: list each user once; a user "
                "profile name is unique in a domain."
            )
        return users

    @field_validator("domain_name")
    @classmethod
    def _domain_name_fits(cls, value: str | None) -> str | None:
        if value is not None and not _DOMAIN_NAME.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a valid domain name. Fix: use letters, digits and "
                "hyphens, starting and ending with a letter or digit, at most 63 characters."
            )
        return value

    def problems(self, where: str) -> Problems:
        """Cross-field problems, each at its field path under `where`."""
        problems = Problems()

        def at(field: str) -> str:
            return f"{where}.{field}" if where else field

        region_problem = self.governance.region_problem(self.region, at("region"))
        if region_problem:
            problems.items.append(region_problem)
        if self.idle_timeout_minutes > self.max_idle_timeout_minutes:
            problems.add(
                at("idleTimeoutMinutes"),
                f"the default idle timeout ({self.idle_timeout_minutes} min) exceeds the "
                f"longest a user may choose ({self.max_idle_timeout_minutes} min).",
                "lower idleTimeoutMinutes, or raise maxIdleTimeoutMinutes.",
            )
        if is_accelerated(self.default_instance_type) and not self.allow_gpu_default_instance:
            problems.add(
                at("defaultInstanceType"),
                f"{self.default_instance_type} is a GPU/accelerator type: every space would "
                "start on it and bill accelerator hours for editing and reading.",
                f"keep the default {DEFAULT_INSTANCE_TYPE} and let users pick a GPU per space, "
                "or set allowGpuDefaultInstance: true.",
            )
        if self.default_instance_type not in self.instance_types:
            problems.add(
                at("defaultInstanceType"),
                f"{self.default_instance_type} is not in instanceTypes: no user could start "
                "the default space.",
                "add it to instanceTypes, or choose a default from them.",
            )
        self._wiring_problems(problems, at)
        return problems

    def _wiring_problems(self, problems: Problems, at: Any) -> None:
        required = {
            "vpcId": (self.vpc_id, "network.vpc_id"),
            "subnetIds": (self.subnet_ids, "network.subnet_ids('notebook')"),
            "securityGroupIds": (
                self.security_group_ids,
                "[network.security_group_id('notebook')]",
            ),
            "executionRoleArn": (self.execution_role_arn, "identity.role_arn('notebook')"),
        }
        for field, (value, example) in required.items():
            if value is None or (isinstance(value, tuple) and not value):
                snake = re.sub(r"([A-Z])", r"_\1", field).lower()
                problems.add(
                    at(field),
                    "required: a VPC-only domain needs its network and execution role.",
                    f"set {field} in the arguments, or pass {snake}={example} to the component.",
                )
        for field, limit in (("subnetIds", MAX_SUBNETS), ("securityGroupIds", MAX_SECURITY_GROUPS)):
            values = self.subnet_ids if field == "subnetIds" else self.security_group_ids
            if values and len(values) > limit:
                problems.add(
                    at(field),
                    f"{len(values)} given; SageMaker accepts at most {limit}.",
                    f"pass at most {limit}.",
                )
        literals: list[tuple[str, Any]] = [
            ("vpcId", self.vpc_id),
            ("executionRoleArn", self.execution_role_arn),
            *(("subnetIds", s) for s in self.subnet_ids or ()),
            *(("securityGroupIds", s) for s in self.security_group_ids or ()),
        ]
        for field, value in literals:
            if isinstance(value, str) and not _LITERAL_IDS[field].fullmatch(value):
                problems.add(
                    at(field),
                    f"{value!r} does not look like {_WHAT[field]}.",
                    f"use {_EXAMPLE[field]}, or the Output of the component that owns it.",
                )


_WHAT = {
    "vpcId": "a VPC id",
    "subnetIds": "a subnet id",
    "securityGroupIds": "a security group id",
    "executionRoleArn": "an IAM role ARN",
}
_EXAMPLE = {
    "vpcId": "'vpc-0123abcd...'",
    "subnetIds": "'subnet-0123abcd...'",
    "securityGroupIds": "'sg-0123abcd...'",
    "executionRoleArn": "'arn:aws:iam::<account>:role/<name>'",
}


def _domain_name(name: str) -> str:
    raw = f"{stack_id()}-{name}"
    cleaned = re.sub(r"-+", "-", re.sub(r"[^a-zA-Z0-9]", "-", raw)).strip("-")
    return cleaned[:63].rstrip("-") or "aistack-notebook"


class Notebook(pulumi.ComponentResource):
    """A VPC-only SageMaker Studio domain with idle shutdown, and one profile per user."""

    domain: aws.sagemaker.Domain
    user_profiles: dict[str, aws.sagemaker.UserProfile]
    kms_key: aws.kms.Key | None
    kms_key_id: pulumi.Output[str]
    domain_id: pulumi.Output[str]
    domain_arn: pulumi.Output[str]
    domain_url: pulumi.Output[str]
    studio_url: pulumi.Output[str]
    home_efs_file_system_id: pulumi.Output[str]
    user_profile_names: list[str]

    def __init__(
        self,
        name: str,
        args: NotebookArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        network: AwsNetwork | None = None,
        vpc_id: pulumi.Input[str] | None = None,
        subnet_ids: Sequence[pulumi.Input[str]] | None = None,
        security_group_ids: Sequence[pulumi.Input[str]] | None = None,
        execution_role_arn: pulumi.Input[str] | None = None,
        kms_key_id: pulumi.Input[str] | None = None,
    ) -> None:
        """`network=` wires the domain to the network's notebook tier, as the other
        components take their network; the raw ids (`vpc_id=`, ...) or Args fields serve a
        VPC that aistack does not manage, and win over the network's where given."""
        if network is not None:
            vpc_id = vpc_id if vpc_id is not None else network.vpc_id
            tier_subnets = network.subnet_ids(WORKLOAD)
            if subnet_ids is None and isinstance(tier_subnets, list | tuple):
                subnet_ids = list(tier_subnets)
            if security_group_ids is None:
                security_group_ids = [network.security_group_id(WORKLOAD)]
        wiring = {
            "vpc_id": vpc_id,
            "subnet_ids": tuple(subnet_ids) if subnet_ids is not None else None,
            "security_group_ids": tuple(security_group_ids)
            if security_group_ids is not None
            else None,
            "execution_role_arn": execution_role_arn,
            "kms_key_id": kms_key_id,
        }

        def checks(valid: NotebookArgs) -> NotebookArgs:
            merged = _with_wiring(valid, name, **wiring)
            merged.problems(name).raise_if_any()
            return merged

        # One pass: the arguments' schema, the wiring keywords merged in, then their checks.
        args = NotebookArgs.validate_with(args, checks, where=name)[1]

        super().__init__(
            TOKEN,
            name,
            {"region": args.region, "users": list(args.users)},
            opts,
        )
        self.args = args
        self.region = args.region
        self._name = name
        governance = args.governance
        tags = tags_for(governance, workload=WORKLOAD)

        self.kms_key = None
        if args.kms_key_id is not None:
            self.kms_key_id = pulumi.Output.from_input(args.kms_key_id)
        else:
            # Retained with the volume: a retained home directory encrypted under a deleted
            # key is unreadable.
            self.kms_key = customer_key(
                f"{name}-key",
                description=f"aistack Studio domain {name}: home EFS and space volumes",
                region=args.region,
                tags=tags,
                opts=stateful_opts(self, governance, allow_destroy=args.allow_destroy_with_data),
            )
            # The key id, not its ARN: the domain reads back the id, and an ARN would show
            # as a change on every refresh.
            self.kms_key_id = self.kms_key.key_id

        self.domain = aws.sagemaker.Domain(
            f"{name}-domain",
            domain_name=args.domain_name or _domain_name(name),
            auth_mode="IAM",
            # All traffic, to AWS APIs and the internet, through the given VPC: its
            # endpoints or NAT decide what a notebook can reach, not SageMaker's own VPC.
            app_network_access_type="VpcOnly",
            vpc_id=args.vpc_id,
            subnet_ids=list(args.subnet_ids or ()),
            kms_key_id=self.kms_key_id,
            default_user_settings=self._user_settings(),
            default_space_settings=self._space_settings(),
            domain_settings=aws.sagemaker.DomainDomainSettingsArgs(
                # The user profile name becomes the execution role session's source
                # identity: the Studio policy matches owners against it, and CloudTrail
                # shows which user acted.
                execution_role_identity_config="USER_PROFILE_NAME",
                docker_settings=aws.sagemaker.DomainDomainSettingsDockerSettingsArgs(
                    enable_docker_access="ENABLED" if args.allow_docker_access else "DISABLED",
                ),
            ),
            retention_policy=aws.sagemaker.DomainRetentionPolicyArgs(
                home_efs_file_system="Delete" if args.allow_destroy_with_data else "Retain",
            ),
            # Studio copies the domain's and profile's tags onto the spaces, apps and jobs
            # users create, so budgets and cost reports see notebook spend under this stack.
            tag_propagation="ENABLED",
            region=args.region,
            tags=tags,
            opts=stateful_opts(self, governance, allow_destroy=args.allow_destroy_with_data),
        )

        self.user_profiles = {}
        for user in args.users:
            # No user settings: each profile inherits the domain's defaults, so idle
            # shutdown and instance defaults are set in one place and cannot drift per user.
            self.user_profiles[user] = aws.sagemaker.UserProfile(
                f"{name}-user-{user}",
                domain_id=self.domain.id,
                user_profile_name=user,
                region=args.region,
                tags=tags_for(governance, workload=WORKLOAD, **{"aistack:notebook-user": user}),
                opts=child_opts(self),
            )

        self.studio_access: aws.iam.RolePolicy | None = None
        if args.grant_studio_permissions:
            invoke = pulumi.InvokeOptions(parent=self)
            self.studio_access = aws.iam.RolePolicy(
                f"{name}-studio-access",
                # An IAM role's name is the last part of its ARN (after any path).
                role=pulumi.Output.from_input(args.execution_role_arn).apply(
                    lambda arn: str(arn).rsplit("/", 1)[-1]
                ),
                policy=studio_execution_policy(
                    aws.get_partition_output(opts=invoke).partition,
                    aws.get_caller_identity_output(opts=invoke).account_id,
                    args.region,
                    self.domain.id,
                    args.instance_types,
                ),
                opts=child_opts(self),
            )

        self.domain_id = self.domain.id
        self.domain_arn = self.domain.arn
        self.domain_url = self.domain.url
        self.studio_url = self.domain.url
        self.home_efs_file_system_id = self.domain.home_efs_file_system_id
        self.user_profile_names = list(args.users)
        self.register_outputs(
            {
                "domain_id": self.domain_id,
                "domain_arn": self.domain_arn,
                "domain_url": self.domain_url,
                "studio_url": self.studio_url,
                "home_efs_file_system_id": self.home_efs_file_system_id,
                "kms_key_id": self.kms_key_id,
                "user_profile_names": self.user_profile_names,
                "region": args.region,
                "idle_timeout_minutes": args.idle_timeout_minutes,
                "max_idle_timeout_minutes": args.max_idle_timeout_minutes,
            }
        )

    # ---- settings --------------------------------------------------------------------------

    def _idle(self, cls: Any) -> Any:
        """Idle shutdown on, with bounds: users choose their timeout between SageMaker's
        minimum and `max_idle_timeout_minutes`, and cannot switch it off."""
        return cls(
            lifecycle_management="ENABLED",
            idle_timeout_in_minutes=self.args.idle_timeout_minutes,
            min_idle_timeout_in_minutes=MIN_IDLE_MINUTES,
            max_idle_timeout_in_minutes=self.args.max_idle_timeout_minutes,
        )

    def _user_settings(self) -> sm.DomainDefaultUserSettingsArgs:
        args = self.args
        instance = args.default_instance_type
        return sm.DomainDefaultUserSettingsArgs(
            execution_role=_required(args.execution_role_arn),
            # Private spaces only; shared spaces take theirs from the space settings below.
            security_groups=list(args.security_group_ids or ()),
            # The updated Studio, where JupyterLab and Code Editor have idle shutdown.
            studio_web_portal="ENABLED",
            default_landing_uri="studio::",
            studio_web_portal_settings=sm.DomainDefaultUserSettingsStudioWebPortalSettingsArgs(
                # Studio Classic (the JupyterServer app) has no built-in idle shutdown.
                hidden_app_types=["JupyterServer"],
            ),
            jupyter_lab_app_settings=sm.DomainDefaultUserSettingsJupyterLabAppSettingsArgs(
                app_lifecycle_management=_UserLabLifecycle(idle_settings=self._idle(_UserLabIdle)),
                default_resource_spec=_UserLabSpec(instance_type=instance),
            ),
            code_editor_app_settings=sm.DomainDefaultUserSettingsCodeEditorAppSettingsArgs(
                app_lifecycle_management=_UserCodeLifecycle(
                    idle_settings=self._idle(_UserCodeIdle)
                ),
                default_resource_spec=_UserCodeSpec(instance_type=instance),
            ),
        )

    def _space_settings(self) -> sm.DomainDefaultSpaceSettingsArgs:
        args = self.args
        return sm.DomainDefaultSpaceSettingsArgs(
            execution_role=_required(args.execution_role_arn),
            security_groups=list(args.security_group_ids or ()),
            jupyter_lab_app_settings=sm.DomainDefaultSpaceSettingsJupyterLabAppSettingsArgs(
                app_lifecycle_management=_SpaceLabLifecycle(
                    idle_settings=self._idle(_SpaceLabIdle)
                ),
                default_resource_spec=_SpaceLabSpec(instance_type=args.default_instance_type),
            ),
        )


# The SDK's nested settings classes, under names that fit a line.
_UserLabLifecycle = sm.DomainDefaultUserSettingsJupyterLabAppSettingsAppLifecycleManagementArgs
_UserLabIdle = (
    sm.DomainDefaultUserSettingsJupyterLabAppSettingsAppLifecycleManagementIdleSettingsArgs
)
_UserLabSpec = sm.DomainDefaultUserSettingsJupyterLabAppSettingsDefaultResourceSpecArgs
_UserCodeLifecycle = sm.DomainDefaultUserSettingsCodeEditorAppSettingsAppLifecycleManagementArgs
_UserCodeIdle = (
    sm.DomainDefaultUserSettingsCodeEditorAppSettingsAppLifecycleManagementIdleSettingsArgs
)
_UserCodeSpec = sm.DomainDefaultUserSettingsCodeEditorAppSettingsDefaultResourceSpecArgs
_SpaceLabLifecycle = sm.DomainDefaultSpaceSettingsJupyterLabAppSettingsAppLifecycleManagementArgs
_SpaceLabIdle = (
    sm.DomainDefaultSpaceSettingsJupyterLabAppSettingsAppLifecycleManagementIdleSettingsArgs
)
_SpaceLabSpec = sm.DomainDefaultSpaceSettingsJupyterLabAppSettingsDefaultResourceSpecArgs


def _with_wiring(args: NotebookArgs, name: str, **wiring: Any) -> NotebookArgs:
    """`args` with the component's keyword inputs filled in; each may be given only once."""
    given = {field: value for field, value in wiring.items() if value is not None}
    if not given:
        return args
    problems = Problems()
    for field in given:
        if getattr(args, field) is not None:
            camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), field)
            problems.add(
                f"{name}.{camel}",
                "given both in the arguments and as a keyword of the component.",
                "set it once.",
            )
    problems.raise_if_any()
    return NotebookArgs.parse({**args.model_dump(), **given}, where=name)


def _required(value: Any) -> pulumi.Input[str]:
    """A wiring input `problems()` has already checked is present."""
    return cast("pulumi.Input[str]", value)
