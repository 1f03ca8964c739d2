"""GENERATED from aistack's pydantic Args by aistack_components/codegen.py: do not edit.

Run `make schema` after changing an Args model; tests/components/ fails until then. Each
`<Token>Args` holds one component's inputs as Pulumi's analyzer reads it: its configuration
plain, with enums for choices and `NotRequired` where the Args have a default (said in the
text), then the ids and ARNs that wire it to other components, as `pulumi.Input`.
"""

import enum
from typing import Any, NotRequired, TypedDict

import pulumi


class AwsDatasetBucketKind(enum.StrEnum):
    DATASET = "dataset"
    CHECKPOINTS = "checkpoints"
    MODELS = "models"
    LOGS = "logs"
    AUDIT = "audit"


class GovernanceEnvironment(enum.StrEnum):
    DEV = "dev"
    STAGING = "staging"
    PROD = "prod"


class GovernanceDataClassification(enum.StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


class ThirdPartyService(TypedDict):
    """A service outside the team's cloud account that sees the data (checklist G6)."""

    name: str
    """The service, e.g. 'wandb' or 'openai'."""
    purpose: str
    """What it is used for."""
    data_shared: str
    """Which data it sees."""
    terms: NotRequired[str]
    """Link to the terms or DPA under which it sees it. Default: ""."""


class Governance(TypedDict):
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""

    owner: str
    """Owning team or person; tagged everywhere."""
    cost_center: str
    """Billing owner; tagged everywhere."""
    environment: NotRequired[GovernanceEnvironment]
    """dev, staging or prod. Default: "dev"."""
    allowed_regions: list[str]
    """Regions where data may be stored and processed (C4). Required: deciding where data lives
    is the first residency step.
    """
    data_classification: NotRequired[GovernanceDataClassification]
    """Highest classification of data this stack handles. Default: "internal"."""
    third_party_services: NotRequired[list[ThirdPartyService]]
    """Services outside the account that see the data (G6). Default: []."""


class DatasetMetadata(TypedDict):
    """What a dataset is, where it came from and on what basis it may be used (D4-D6, G1)."""

    name: str
    """Dataset name, e.g. 'support-tickets'."""
    version: str
    """The pinned version runs read (D4); never 'latest'."""
    source: str
    """Where it came from: URL, system or team (D6)."""
    licence: str
    """Licence or terms, e.g. 'CC-BY-4.0', 'proprietary' (D6)."""
    contains_personal_data: NotRequired[bool]
    """True if any record identifies a person, even pseudonymised (D5). Default: false."""
    legal_basis: NotRequired[str]
    """Documented basis for using personal data (e.g. 'consent', 'contract', 'legitimate
    interest: DPIA-42'); required when contains_personal_data (D5, G1). Default: "".
    """
    anonymised: NotRequired[bool]
    """True if personal data was anonymised. Default: false."""


class AwsDatasetBucketArgs(TypedDict):
    """The inputs of AwsDatasetBucket: its configuration, validated into
    aistack.aws.dataset_bucket.DatasetBucketArgs as a Python caller's is, and its wiring.
    """

    kind: AwsDatasetBucketKind
    """dataset, checkpoints, models, logs or audit (CloudTrail log files, for aws.AuditTrail):
    sets lifecycle and, for logs and audit, which AWS services may write.
    """
    region: str
    """Region of the bucket; must be the compute's region (D2) and in
    governance.allowed_regions (C4). Explicit: never the provider's default.
    """
    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    dataset: NotRequired[DatasetMetadata]
    """Required for kind 'dataset': lineage, licence, basis (D4-D6)."""
    bucket_name: NotRequired[str]
    """Physical name; default: the logical name plus a random suffix."""
    noncurrent_days: NotRequired[int]
    """Days an overwritten version is kept (D1); default by kind."""
    keep_noncurrent_versions: NotRequired[int]
    """Newest overwritten versions always kept."""
    transition_noncurrent_after_days: NotRequired[int]
    """Move overwritten versions to Standard-IA after N days (S3 requires at least 30); 0
    disables.
    """
    expire_current_after_days: NotRequired[int]
    """Expire live objects (logs only by default)."""
    kms_key_arn: NotRequired[str]
    """Share an existing customer key; default: a new key, rotated yearly."""
    allow_destroy_with_data: NotRequired[bool]
    """Let `pulumi destroy` delete the bucket and every object in it. Off: the bucket is
    retained (and protected in prod). Default: false.
    """
    access_logs_bucket_name: NotRequired[pulumi.Input[str]]
    """Name of the stack's logs bucket (an AwsDatasetBucket of kind logs in the same region):
    S3 server access logs for this bucket go there, under s3-access/<name>/.
    """


class AwsWorkload(TypedDict):
    """One role, trusted by the services that run one kind of work."""

    name: str
    """The workload: a lowercase DNS-style slug (e.g. 'training'), unique in the component.
    Becomes the role's name and its aistack:workload tag, which the budget kill switch acts
    on.
    """
    services: list[str]
    """Service principals that may assume the role: ec2.amazonaws.com (instances, including
    Batch compute environments; gets an instance profile), ecs-tasks.amazonaws.com (Batch
    job containers), sagemaker.amazonaws.com (notebooks). Not ec2 and ecs-tasks together: a
    job would run with the instance role.
    """
    session_manager: NotRequired[bool]
    """EC2-trusted roles only: attach AmazonSSMManagedInstanceCore so operators reach instances
    through Session Manager instead of SSH keys (C6). Default on. Default: true.
    """
    cloudwatch_agent: NotRequired[bool]
    """EC2-trusted roles only: an inline policy with what the node's CloudWatch agent needs
    beyond its log group and namespace (ec2:DescribeTags, for the AutoScalingGroupName
    dimension). Writing logs and metrics is granted by the component that owns the group and
    namespace (T3, T6). Default on. Default: true.
    """
    batch_instance_role: NotRequired[bool]
    """EC2-trusted roles only: attach AmazonEC2ContainerServiceforEC2Role, which AWS Batch
    instances need to join their ECS cluster. Default off; on for the default 'training'
    workload. Default: false.
    """
    allow_unconditioned_trust: NotRequired[bool]
    """Drop the aws:SourceAccount condition from the trust of ecs-tasks and SageMaker. Off:
    only this account's tasks and notebooks can assume the role. Turn on only for a feature
    that does not send the key. Default: false.
    """
    description: NotRequired[str]
    """Added to the role's description. Default: ""."""


class AwsKubernetesServiceAccountMechanism(enum.StrEnum):
    POD_IDENTITY = "pod-identity"
    IRSA = "irsa"


class AwsKubernetesServiceAccount(TypedDict):
    """A workload role for one Kubernetes service account, via EKS Pod Identity or IRSA."""

    name: str
    """The workload (role) name, a slug unique among all workloads."""
    namespace: str
    """Namespace of the service account."""
    service_account: str
    """Name of the service account."""
    mechanism: NotRequired[AwsKubernetesServiceAccountMechanism]
    """'pod-identity' (default: EKS Pod Identity; no per-cluster OIDC provider to manage) or
    'irsa' (IAM roles for service accounts, for clusters without the Pod Identity agent).
    Default: "pod-identity".
    """
    cluster_name: NotRequired[str]
    """pod-identity: pins the trust to this cluster's session tag and, with region, creates the
    Pod Identity association.
    """
    region: NotRequired[str]
    """pod-identity: the cluster's region, where the association is created; must be in
    governance.allowedRegions (C4).
    """
    oidc_provider_arn: NotRequired[str]
    """irsa: ARN of the cluster's IAM OIDC provider. Required for irsa."""
    oidc_issuer_url: NotRequired[str]
    """irsa: the cluster's OIDC issuer URL (https://oidc.eks.<region>.amazonaws.com/id/<id>).
    Required for irsa.
    """


class AwsGithubOidc(TypedDict):
    """A CI role GitHub Actions can assume for one repository's branches and environments."""

    repository: str
    """'owner/name' of the one repository whose workflows may assume the role. No wildcards:
    'org/*' would hand the role to every repository in the organisation.
    """
    branches: NotRequired[list[str]]
    """Branch names (e.g. 'main') whose workflow runs may assume the role; matched as sub
    'repo:<repository>:ref:refs/heads/<branch>'. No wildcards. Default: [].
    """
    environments: NotRequired[list[str]]
    """GitHub environments (e.g. 'prod') whose jobs may assume the role; matched as sub
    'repo:<repository>:environment:<env>'. A job that names an environment gets this subject
    instead of the branch one. No wildcards. Default: [].
    """
    create_provider: NotRequired[bool]
    """Create the account's GitHub OIDC identity provider. An account holds one per URL: in a
    second stack set providerArn instead. Default: true.
    """
    provider_arn: NotRequired[str]
    """ARN of an existing token.actions.githubusercontent.com provider; when set no provider is
    created.
    """


class AwsWorkloadIdentityArgs(TypedDict):
    """The inputs of AwsWorkloadIdentity: its configuration, validated into
    aistack.aws.workload_identity.args.WorkloadIdentityArgs as a Python caller's is, and its
    wiring.
    """

    governance: Governance
    """Owner, cost centre and allowed regions; required. Tags every role and profile, and
    bounds where Pod Identity associations may be created (C4).
    """
    workloads: NotRequired[list[AwsWorkload]]
    """The roles to create, one per workload. Default: training (EC2: ASG nodes and Batch
    hosts), training-job (ecs-tasks: Batch job containers), inference (EC2), notebook
    (SageMaker). Default: [{"name": "training", "services": ["ec2.amazonaws.com"],
    "batchInstanceRole": true}, {"name": "training-job", "services":
    ["ecs-tasks.amazonaws.com"]}, {"name": "inference", "services": ["ec2.amazonaws.com"]},
    {"name": "notebook", "services": ["sagemaker.amazonaws.com"]}].
    """
    kubernetes_service_accounts: NotRequired[list[AwsKubernetesServiceAccount]]
    """Extra workload roles for Kubernetes service accounts (Pod Identity or IRSA). Default:
    none. Default: [].
    """
    github: NotRequired[AwsGithubOidc]
    """A CI role for GitHub Actions via OIDC, with no permissions until the caller grants them.
    Default: none.
    """
    max_session_duration: NotRequired[int]
    """Longest session, in seconds, a role's credentials last (AWS allows 3600-43200). Default
    3600: services refresh credentials before they expire; raise it only for CI runs of
    `pulumi up` longer than an hour. Default: 3600.
    """
    role_path: NotRequired[str]
    """IAM path of the roles and instance profiles. Default '/': some consumers (EKS aws-auth
    mappings) mishandle paths. Default: "/".
    """
    permissions_boundary_arn: NotRequired[str]
    """Managed policy set as every role's permissions boundary, when the organisation requires
    one. Default: none.
    """


class AwsBudgetGuardAnomalyFrequency(enum.StrEnum):
    DAILY = "DAILY"
    IMMEDIATE = "IMMEDIATE"


class AwsBudgetGuardArgs(TypedDict):
    """The inputs of AwsBudgetGuard: its configuration, validated into
    aistack.aws.budget_guard.args.BudgetGuardArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """Region of the alert topics, their key and the kill switch. The kill switch stops
    training capacity in this region only, so use the training region. Must be in
    governance.allowed_regions (C4). Budgets and anomaly detection are global and take no
    region. Explicit: never the provider's default.
    """
    monthly_limit: float
    """Monthly budget for the stack in USD (the budgets' unit). Required: a budget is the first
    cost control (C3). Was monthlyLimitUsd (still accepted, deprecated).
    """
    daily_limit: NotRequired[float]
    """Daily budget in USD. Default: the monthly limit / 30, rounded up to a whole dollar, so a
    day at the monthly pace is just inside it. Was dailyLimitUsd (still accepted,
    deprecated).
    """
    alert_emails: list[str]
    """Who is told (1-10 addresses; AWS Budgets sends to at most 10 per alert). Budgets mail
    them directly; their SNS topic subscriptions must be confirmed from the mail AWS sends.
    """
    monthly_actual_thresholds: NotRequired[list[float]]
    """Percentages of the monthly limit at which actual spend alerts. Default 50/80/100:
    halfway, time to act, limit reached. At least one must be <= 100. Default: [50, 80,
    100].
    """
    monthly_forecast_threshold: NotRequired[float]
    """Alert when the month's forecast passes this percentage of the limit. Default 100: warned
    while there is still time to avoid the overrun. Default: 100.
    """
    daily_actual_threshold: NotRequired[float]
    """Percentage of the daily limit at which a day's spend alerts. Default: 100."""
    kill_switch: NotRequired[bool]
    """Deploy a Lambda that scales the stack's training capacity (tagged
    aistack:workload=training) to zero when actual spend reaches 100 % of the monthly limit.
    Off by default: it stops running jobs, so a team opts in knowingly. Default: false.
    """
    kill_switch_dry_run: NotRequired[bool]
    """The kill switch only logs what it would stop. For trying it out; needs kill_switch.
    Default: false.
    """
    kill_switch_log_retention_days: NotRequired[int]
    """Days the kill switch's logs are kept. Default a year: they are the record of why
    training stopped, and tiny. Default: 365.
    """
    anomaly_threshold_usd: NotRequired[float]
    """Report a cost anomaly when its total impact reaches this many USD. Default 100: below
    that a GPU stack's daily noise drowns the signal. Default: 100.
    """
    anomaly_frequency: NotRequired[AwsBudgetGuardAnomalyFrequency]
    """DAILY: one e-mail digest a day to alert_emails. IMMEDIATE: each anomaly as it is found,
    to the alert topic (AWS sends IMMEDIATE only through SNS). Default: "DAILY".
    """
    anomaly_monitor_arn: NotRequired[str]
    """Subscribe to this existing anomaly monitor instead of creating one on the stack tag. For
    AWS Organizations member accounts, where only the management account may create tag
    monitors.
    """
    activate_cost_allocation_tag: NotRequired[bool]
    """Activate the aistack:stack cost allocation tag, which the budgets and the monitor filter
    on. Set false where the management account activates it (only it may, in an AWS
    Organization). Default: true.
    """
    subscribe_emails_to_topic: NotRequired[bool]
    """Also subscribe alert_emails to the alert topic, so what only the topic carries
    (IMMEDIATE anomalies) reaches them. Once confirmed, budget alerts arrive twice (direct
    and via SNS); set false to get them once. Default: true.
    """
    allow_destroy_with_logs: NotRequired[bool]
    """Let `pulumi destroy` delete the kill switch's log group and key. Off: both are retained
    (and protected in prod), they are the audit trail. Default: false.
    """


class AwsQuotaNeedMarket(enum.StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"


class AwsQuotaNeed(TypedDict):
    """A pool's quota need as configuration: `{pool, instanceTypes, maxNodes, market}`."""

    pool: str
    """The pool's name; it appears in the request's summary. Required."""
    instance_types: list[str]
    """Every GPU instance type the pool may launch, e.g. ['g5.12xlarge']. Required; the largest
    (by vCPUs) sizes the request.
    """
    max_nodes: int
    """The pool's maximum node count (its autoscaling maximum). Required."""
    market: AwsQuotaNeedMarket
    """'spot' or 'on-demand'. Required, no default: the market selects a different quota, and
    guessing it would file the wrong request.
    """
    surge_nodes: NotRequired[int]
    """Nodes the pool may run above maxNodes for a while (an instance refresh that launches
    replacements first). Default 0; aws.InferenceTier reports its refresh surge itself.
    Default: 0.
    """


class AwsGpuQuotaArgs(TypedDict):
    """The inputs of AwsGpuQuota: its configuration, validated into
    aistack.aws.gpu_quota.GpuQuotaArgs as a Python caller's is, and its wiring.
    """

    region: str
    """Region to request quota in. Quotas are per account and region, so this must be the
    pools' region; it must be in governance.allowed_regions (C4). Explicit: never the
    provider's default.
    """
    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    needs: NotRequired[list[AwsQuotaNeed]]
    """Pools sized from configuration, each {pool, instanceTypes, maxNodes, market}. Default:
    none, for stacks that pass pool components as `pools=`; at least one need is required
    across both. Default: [].
    """
    headroom_instances_per_pool: NotRequired[int]
    """Instances of its largest type added per pool, on top of its maximum and its surge.
    Default 1: AWS Batch (BEST_FIT_PROGRESSIVE and the SPOT_*_OPTIMIZED strategies) may
    exceed maxvCpus by one instance, and Auto Scaling exceeds its maximum by one instance
    (or 10 %) while it rebalances zones; at the exact maximum that launch fails on the
    quota. 0 requests the maxima exactly. Default: 1.
    """
    headroom_percent: NotRequired[float]
    """Extra quota on top of the pools' maximum, in percent (20 means 20%), rounded up to whole
    instances of the smallest type in that quota. Default 0: the per-pool headroom and the
    pools' surge already cover what AWS launches above the maxima; add a percentage for
    capacity outside the pools (ad-hoc runs). Default: 0.
    """
    floors: NotRequired[dict[str, int]]
    """Minimum vCPUs to request per quota code, e.g. {'L-7212CCBC': 384}. Default: none. Set a
    floor to the account's current value when it is already above what the pools need (a
    request can never lower a quota, and the provider refuses to create one below the
    current value), or to keep a quota when pools shrink. A floor for a quota no pool uses
    is requested on its own. Default: {}.
    """


class AwsContainerRegistryArgs(TypedDict):
    """The inputs of AwsContainerRegistry: its configuration, validated into
    aistack.aws.container_registry.ContainerRegistryArgs as a Python caller's is, and its
    wiring.
    """

    repositories: list[str]
    """One repository per image name, e.g. ['trainer', 'vllm-server']. Each must be a valid ECR
    repository name (lowercase, digits, '.', '_', '-', '/').
    """
    region: str
    """Region of the repositories; must be in governance.allowed_regions (C4). Explicit: never
    the provider's default. Pulls from another region cost transfer.
    """
    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    namespace: NotRequired[str]
    """Prefix of every repository name, e.g. 'ml-platform/'. Default: '<project>/<stack>/',
    since ECR names are unique per region and the account's other stacks (this program's
    `staging` beside `dev` too) pick theirs; '' for none.
    """
    keep_release_images: NotRequired[int]
    """Newest images kept per release tag prefix (default 20): enough to roll back months of
    releases, few enough that storage stays flat. Default: 20.
    """
    release_tag_prefixes: NotRequired[list[str]]
    """Tag prefixes that mark releases (default 'v', 'release-'); each is kept to
    keepReleaseImages. Images with other tags are never expired. Default: ["v", "release-"].
    """
    untagged_expiry_days: NotRequired[int]
    """Days after push an untagged image is expired (default 7): build leftovers and superseded
    layers, long enough to finish a rollout that used one. Default: 7.
    """
    kms_key_arn: NotRequired[str]
    """Encrypt with this existing customer key (same region); default: a new key for this
    registry, rotated yearly. ECR fixes the key at repository creation.
    """
    allow_destroy_with_images: NotRequired[bool]
    """Let `pulumi destroy` delete the repositories with every image in them. Off: repositories
    and their key are retained (and protected in prod). Default: false.
    """


class AwsAuditTrailArgs(TypedDict):
    """The inputs of AwsAuditTrail: its configuration, validated into
    aistack.aws.audit_trail.AuditTrailArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """Region of the trail's home, its bucket and key; in governance.allowed_regions (C4). The
    trail itself records every region.
    """
    retention_days: NotRequired[int]
    """Days a log file is kept before S3 expires it. Default a year, the least most audit
    regimes ask for. Default: 365.
    """
    allow_destroy_with_logs: NotRequired[bool]
    """Let `pulumi destroy` delete the log bucket and key. Off: both are retained (and
    protected in prod): they are the audit record. Default: false.
    """
    data_bucket_arns: NotRequired[pulumi.Input[list[str]]]
    """The bucketArn of each AwsDatasetBucket whose object reads and writes the trail records
    (the personal-data buckets, D5), as a list literal: the trail writes one selector prefix
    per bucket.
    """


class AwsNetworkEgress(enum.StrEnum):
    ENDPOINTS = "endpoints"
    NAT = "nat"
    NONE = "none"


class AwsNetworkArgs(TypedDict):
    """The inputs of AwsNetwork: its configuration, validated into
    aistack.aws.network.args.NetworkArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """Region of the VPC: explicit (never the provider's default) and within
    governance.allowed_regions (C4). Must offer the GPU types (C2).
    """
    cidr_block: NotRequired[str]
    """The VPC's IPv4 range; default 10.40.0.0/16, away from the 10.0.0.0/16 that most examples
    (and so most peers) use. Private (RFC 1918 or 100.64.0.0/10), prefix /16 to /21: each
    tier gets a quarter of it, carved per zone. Default: "10.40.0.0/16".
    """
    training_instance_types: NotRequired[list[str]]
    """GPU instance types training runs on (catalog names, e.g. 'p5.48xlarge'). Training
    subnets go only where ALL of them are offered. Empty: no training tier. Default: [].
    """
    inference_instance_types: NotRequired[list[str]]
    """GPU instance types that serve inference; as for training. Empty: no inference tier and
    no load balancer security group. Default: [].
    """
    notebook: NotRequired[bool]
    """Add a notebook tier (own subnets and security group). Off. Default: false."""
    notebook_instance_types: NotRequired[list[str]]
    """GPU types notebooks use, to place notebook subnets; empty: the region's first zones.
    Only with notebook: true. Default: [].
    """
    max_zones: NotRequired[int]
    """Most zones per tier; default 3: enough spread to find scarce GPU capacity, few enough to
    keep per-zone endpoint costs down. Default: 3.
    """
    availability_zones: NotRequired[list[str]]
    """Use exactly these zones (e.g. where a capacity reservation is) instead of the catalog's
    choice; each must offer every type of every tier. Default: none.
    """
    egress: NotRequired[AwsNetworkEgress]
    """How private nodes reach AWS APIs: 'endpoints' (default: interface endpoints, no internet
    route at all), 'nat' (one NAT gateway: reaches the internet, cheaper, single-zone) or
    'none' (S3 only; images and agents must need nothing else). Default: "endpoints".
    """
    max_endpoint_zones: NotRequired[int]
    """Zones that get interface-endpoint network interfaces (the first training zones).
    Default: every training zone. Each endpoint costs about $7.30 a month per zone; 1 or 2
    cut that, other zones then reach the endpoints cross-zone.
    """
    extra_endpoint_services: NotRequired[list[str]]
    """More interface endpoints, by service suffix (e.g. 'sagemaker.api', 'batch'). Default
    none. Default: [].
    """
    public_endpoint: NotRequired[bool]
    """Make the load balancer internet-facing: adds public subnets (ALB only, never GPU nodes)
    and an internet gateway. Off: an internal load balancer in private subnets, reachable
    from the VPC and what is peered to it. Default: false.
    """
    alb_ingress_cidrs: NotRequired[list[str]]
    """Who may reach the load balancer on 443/80. Default: 0.0.0.0/0 when public_endpoint, else
    the VPC's own range.
    """
    flow_log_retention_days: NotRequired[int]
    """Days VPC flow logs are kept; default 90: long enough to investigate an incident, short
    enough to stay cheap. A CloudWatch retention value. Default: 90.
    """
    gateway_port: NotRequired[int]
    """Port the inference gateway listens on; the only port the load balancer may reach on
    inference nodes. Default 8080. Default: 8080.
    """
    allow_destroy_flow_logs: NotRequired[bool]
    """Let `pulumi destroy` delete the flow-log group and its key. Off: they are retained
    (protected in prod), because they are the audit trail. Default: false.
    """


class AwsTrainingPoolScheduler(enum.StrEnum):
    BATCH = "batch"
    ASG = "asg"


class AwsTrainingPoolMarket(enum.StrEnum):
    SPOT = "spot"
    ON_DEMAND = "on-demand"


class AwsMachineImage(TypedDict):
    """The node's AMI: pinned by id, or resolved from an SSM parameter at deploy time."""

    ami_id: NotRequired[str]
    """Pinned image id (preferred, E1)."""
    ssm_parameter: NotRequired[str]
    """Public SSM parameter resolved on each `pulumi up`; the resolved id is exported and
    written into the launch template, so nodes never change image between deployments.
    Default: the scheduler's recommended GPU image.
    """


class AwsJobSpec(TypedDict):
    """The job definition template: what one training job asks for."""

    gpus: NotRequired[int]
    """GPUs per job; default: a whole node."""
    vcpus: NotRequired[int]
    """vCPUs per job; default: node minus 2."""
    memory_mib: NotRequired[int]
    """Memory per job; default: 90% of the node (agent headroom)."""
    shared_memory_mib: NotRequired[int]
    """/dev/shm for data loader workers (PyTorch needs more than docker's 64 MB default).
    Default: 16384.
    """
    command: NotRequired[list[str]]
    """Command run in the image. Default: ["python", "-m", "train"]."""
    retry_attempts: NotRequired[int]
    """Attempts when the host is reclaimed (T2); app errors exit. Default: 3."""
    checkpoint_on_interruption: NotRequired[bool]
    """The trainer handles SIGUSR1 by writing a checkpoint and exiting 138 (128 + SIGUSR1), and
    wants it on a Spot interruption notice: the job then carries
    AISTACK_CHECKPOINT_SIGNAL=USR1, the host's spot watch sends it the signal, and Batch
    retries the job on exit 138 (T1, T2). Off (default): the trainer is never signalled,
    since SIGUSR1's default action would end it; the host still flushes the checkpoint
    directory and a reclaimed job is still retried. Default: false.
    """
    environment: NotRequired[dict[str, str]]
    """Extra environment for every job (no secrets). Default: {}."""


class AwsTrainingPoolArgs(TypedDict):
    """The inputs of AwsTrainingPool: its configuration, validated into
    aistack.aws.training_pool.TrainingPoolArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """The pool's region: must equal the dataset bucket's (D2) and be allowed (C4)."""
    scheduler: NotRequired[AwsTrainingPoolScheduler]
    """batch: jobs on demand from 0 vCPUs. asg: a standing group. Default: "batch"."""
    instance_types: list[str]
    """GPU instance types of ONE GPU class (same GPU model and count); several sizes widen the
    Spot pools the allocator can choose from.
    """
    market: NotRequired[AwsTrainingPoolMarket]
    """Spot is 40-70% cheaper; runs resume from checkpoints (T1, T2). Default: "spot"."""
    max_nodes: int
    """The cost cap of the pool; required."""
    min_nodes: NotRequired[int]
    """asg only; 0 so an unused pool costs nothing. Default: 0."""
    image: str
    """Training image by digest (E1): repo@sha256:<64 hex>."""
    machine_image: NotRequired[AwsMachineImage]
    """The node's AMI: pinned by id, or resolved from an SSM parameter at deploy time. Default:
    its own defaults.
    """
    max_runtime_minutes: int
    """Hard wall-clock limit per job and per node (T5). Required: a run without a limit is how
    a stuck job bills for a month.
    """
    idle_minutes: NotRequired[int]
    """asg: idle minutes before a node leaves. Default: 30."""
    idle_gpu_util_percent: NotRequired[int]
    """Idle below this GPU %. Default: 5."""
    starvation_gpu_util_percent: NotRequired[int]
    """Alarm when busy nodes average GPU use below this (T3). Default: 40."""
    starvation_minutes: NotRequired[int]
    """...for this long (T3). Default: 30."""
    dataset_prefix: NotRequired[str]
    """Prefix in the dataset bucket holding one sub-prefix per version. Default: ""."""
    dataset_version: NotRequired[str]
    """Pinned dataset version; default: the dataset bucket's (D4)."""
    checkpoint_prefix: NotRequired[str]
    """Prefix for checkpoints and manifests. Default: "runs"."""
    tracker_uri: NotRequired[str]
    """Experiment tracker endpoint passed to jobs (E6), e.g. MLflow URL."""
    root_volume_gb: NotRequired[int]
    """Encrypted gp3 root (images are big). Default: 200."""
    stop_timeout_seconds: NotRequired[int]
    """Grace between SIGTERM and SIGKILL for a container on a reclaimed host: Spot gives 120 s,
    keep a margin, use it to write the last checkpoint (T1). Default: 110.
    """
    log_retention_days: NotRequired[int]
    """Retention of the pool's log group (T6). Default: 90."""
    job: NotRequired[AwsJobSpec]
    """The job definition template: what one training job asks for. Default: its own defaults."""
    alarm_topic_arn: NotRequired[pulumi.Input[str]]
    """SNS topic for the pool's alarms."""
    subnet_ids: pulumi.Input[list[str]]
    """The network's trainingSubnetIds: where nodes run."""
    security_group_id: pulumi.Input[str]
    """The network's trainingSecurityGroupId: the nodes' security group."""
    instance_role_arn: pulumi.Input[str]
    """The role the nodes run as (AwsWorkloadIdentity roleArns["training"])."""
    instance_profile_arn: pulumi.Input[str]
    """Its instance profile (AwsWorkloadIdentity instanceProfileArns["training"])."""
    job_role_arn: NotRequired[pulumi.Input[str]]
    """The role Batch jobs run as (AwsWorkloadIdentity roleArns["training-job"]); required for
    the batch scheduler.
    """
    dataset_bucket_name: pulumi.Input[str]
    """The dataset bucket's bucketName (an AwsDatasetBucket of kind dataset in the same
    region). Nodes and jobs read datasetPrefix from it.
    """
    dataset_bucket_arn: pulumi.Input[str]
    """The dataset bucket's bucketArn."""
    dataset_kms_key_arn: pulumi.Input[str]
    """The dataset bucket's kmsKeyArn: its readers decrypt with it, through S3 only."""
    checkpoints_bucket_name: pulumi.Input[str]
    """The checkpoints bucket's bucketName (an AwsDatasetBucket of kind checkpoints in the same
    region). Nodes and jobs write checkpointPrefix to it.
    """
    checkpoints_bucket_arn: pulumi.Input[str]
    """The checkpoints bucket's bucketArn."""
    checkpoints_kms_key_arn: pulumi.Input[str]
    """The checkpoints bucket's kmsKeyArn: its readers decrypt with it, through S3 only."""


class AwsNotebookArgs(TypedDict):
    """The inputs of AwsNotebook: its configuration, validated into
    aistack.aws.notebook.NotebookArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Owner, cost centre and allowed regions; required. Tags the domain, key and profiles, and
    the region must be one of its allowedRegions (C4).
    """
    region: str
    """Region of the domain and its home EFS volume; required and explicit, never the
    provider's default: it must be in governance.allowedRegions (C4) and should be the
    region of the data notebooks read (D2).
    """
    users: list[str]
    """One Studio user profile per entry: lowercase slugs (e.g. 'ana', 'data-team'), unique.
    Required: a domain nobody can open is dead weight.
    """
    vpc_id: NotRequired[pulumi.Input[str]]
    """VPC the domain runs in (e.g. network.vpc_id). Required, here or as the `vpc_id=` keyword
    of the component.
    """
    subnet_ids: NotRequired[list[pulumi.Input[str]]]
    """Private subnets for the apps and the EFS mount targets, 1-16 (e.g.
    network.subnet_ids('notebook')). Required, here or as a keyword. Private only: VPC-only
    domains refuse public subnets. Give two or more zones so one zone's outage does not lock
    everyone out of their home directory.
    """
    security_group_ids: NotRequired[list[pulumi.Input[str]]]
    """Security groups of every app, 1-4 (e.g. [network.security_group_id('notebook')]).
    Required, here or as a keyword. They must allow HTTPS out to the VPC's endpoints or NAT;
    SageMaker adds its own group for NFS to the home volume.
    """
    execution_role_arn: NotRequired[pulumi.Input[str]]
    """Role every user's and shared space's apps run as (e.g. identity.role_arn('notebook')).
    Required, here or as a keyword; it must trust sagemaker.amazonaws.com.
    """
    kms_key_id: NotRequired[pulumi.Input[str]]
    """Customer KMS key (id or ARN) for the home EFS volume and space EBS volumes. Default: a
    new key with yearly rotation, retained like the data it guards.
    """
    idle_timeout_minutes: NotRequired[int]
    """Minutes a JupyterLab or Code Editor app may sit idle (no kernel or terminal activity)
    before Studio shuts it down (C5). Default 60: long enough for a lunch break, short
    enough that a forgotten GPU costs an hour, not a weekend. SageMaker's minimum is 60.
    Default: 60.
    """
    max_idle_timeout_minutes: NotRequired[int]
    """Longest idle timeout a user may choose for their own space; the shortest is 60. Default
    240, the most AIS-C5-01 accepts: users tune the timeout within bounds and cannot turn
    idle shutdown off. Default: 240.
    """
    default_instance_type: NotRequired[str]
    """Instance a new JupyterLab or Code Editor space starts on. Default ml.t3.medium (about
    $0.05/hour); users pick a GPU per space when the work needs one. Default:
    "ml.t3.medium".
    """
    instance_types: NotRequired[list[str]]
    """The instance types users may start apps on: the execution role's CreateApp is
    conditioned on sagemaker:InstanceTypes. Must include default_instance_type. Default:
    ml.t3.medium, ml.t3.large, ml.m5.xlarge and one single-GPU type, ml.g5.xlarge; add
    larger GPUs deliberately. Default: ["ml.t3.medium", "ml.t3.large", "ml.m5.xlarge",
    "ml.g5.xlarge"].
    """
    grant_studio_permissions: NotRequired[bool]
    """Attach to the execution role what Studio users need in this domain
    (aws.workload_identity.studio_execution_policy): their own spaces and apps, on
    instance_types only. Off: the role's owner grants it; without it a user can open the
    domain but launch nothing. Default: true.
    """
    allow_gpu_default_instance: NotRequired[bool]
    """Allow a GPU or accelerator type as default_instance_type. Off: every space a user opens
    would start on a GPU, billed from the first minute. Default: false.
    """
    allow_docker_access: NotRequired[bool]
    """Let spaces build and run Docker containers. Off: Docker in a space runs with privileges
    beyond the notebook's and pulls images from outside the review path. Default: false.
    """
    domain_name: NotRequired[str]
    """Physical domain name (letters, digits, hyphens; at most 63). Default:
    '<project>-<stack>-<name>', shortened to fit.
    """
    allow_destroy_with_data: NotRequired[bool]
    """Let `pulumi destroy` delete the home EFS volume (retention 'Delete'), the domain and its
    KMS key. Off: the volume is retained when the domain goes, and the domain and key are
    retained (and protected in prod). Default: false.
    """


class AwsModelVersionStandby(enum.StrEnum):
    WARM = "warm"
    ZERO = "zero"


class AwsModelVersion(TypedDict):
    """One deployable model version: its traffic share, its bounds and who approved it."""

    version: str
    """The version as stored in the models bucket, under s3://<bucket>/<modelName>/<version>/
    (S7). Explicit: 'latest', 'current' and 'stable' are refused, because they name whatever
    is newest.
    """
    weight: int
    """Share of traffic in per cent; the weights of all versions sum to 100. 0 keeps the
    version deployable without traffic (S6): rollback is a weight change.
    """
    min_nodes: NotRequired[int]
    """Nodes kept while the version takes traffic; default: the tier's minNodes. At least 1:
    request-count scaling cannot start a group from zero.
    """
    max_nodes: NotRequired[int]
    """Most nodes of this version (its cost cap); default: the tier's maxNodes."""
    standby: NotRequired[AwsModelVersionStandby]
    """At weight 0: 'warm' (default) keeps one node loaded, so a rollback takes seconds; 'zero'
    keeps none, so it costs nothing and a rollback waits for a node to boot and load the
    model. Default: "warm".
    """
    approved_by: NotRequired[str]
    """Who approved this version for production (G3), e.g. an email or a ticket. Required for
    every version when governance.environment is prod.
    """
    instance_type: NotRequired[str]
    """GPU instance type for this version; default: the tier's."""


class AwsInferenceTierRuntime(enum.StrEnum):
    VLLM = "vllm"
    TRITON = "triton"
    TENSORRT_LLM = "tensorrt-llm"


class AwsInferenceTierRequestLogging(enum.StrEnum):
    NONE = "none"
    METADATA = "metadata"
    FULL = "full"


class AwsInferenceTierLogDataClassification(enum.StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


class AwsInferenceTierFallback(enum.StrEnum):
    ERROR = "error"
    PREVIOUS_VERSION = "previous_version"


class GatewayConfigFallback(enum.StrEnum):
    ERROR = "error"
    PREVIOUS_VERSION = "previous_version"


class GatewayConfig(TypedDict):
    """The nginx inference front that sits before one model server (S3, S4, G5)."""

    listen_address: NotRequired[str]
    """Address nginx listens on: an IPv4 address, a bracketed IPv6 address or '*'. Use
    127.0.0.1 when another proxy or load balancer runs on the node. Default: "0.0.0.0".
    """
    listen_port: NotRequired[int]
    """Port clients connect to. Default: 8080."""
    upstream: NotRequired[str]
    """host:port of the model server (vLLM, Triton) this gateway fronts. Default:
    "127.0.0.1:8000".
    """
    tls_certificate: NotRequired[str]
    """PEM certificate file: the gateway then listens with TLS (1.2 and 1.3) on listen_port.
    Set with tls_certificate_key. A load balancer in front that does not validate target
    certificates (AWS ALB) takes a self-signed one made on the node at boot. None: plain
    HTTP.
    """
    tls_certificate_key: NotRequired[str]
    """PEM private key file of tls_certificate; set with it."""
    rate_limit_per_second: NotRequired[int]
    """Sustained requests per second allowed per client (S3). The client is the value of
    `client_key_header` when the request carries it, else its address. Requests over the
    limit get 429 with a JSON error and Retry-After. Cache hits count too: the limit is
    checked before the cache. Default: 10.
    """
    rate_limit_burst: NotRequired[int]
    """Requests a client may make above the sustained rate at once, served without delay,
    before 429s start (nginx `limit_req burst=... nodelay`). Default: 20.
    """
    client_key_header: NotRequired[str]
    """Request header that identifies a client (its API key). OpenAI-style clients send
    'Authorization: Bearer <key>'; use e.g. 'X-API-Key' if yours differ. The gateway does
    not validate keys, the model server does: a client can mint fresh keys to get fresh rate
    budgets, which only buys it 401s from a model server that checks keys. Default:
    "Authorization".
    """
    max_concurrent_upstream: NotRequired[int]
    """Most requests in flight to the model server at once, across all nginx workers (S3).
    Requests beyond it are refused at once with 503, a JSON error and Retry-After: 1
    (open-source nginx cannot queue them). Cache hits do not take a slot. Default: 32.
    """
    upstream_timeout_seconds: NotRequired[int]
    """How long the model server may stay silent (between two reads or writes) before the
    request fails over to the fallback. Long non-streamed generations need a generous value.
    Default: 300.
    """
    upstream_connect_timeout_seconds: NotRequired[int]
    """Connect timeout to the model server; it is on loopback or in the pod, so a slow connect
    means it is down. Default: 2.
    """
    fallback: NotRequired[GatewayConfigFallback]
    """When the model server refuses connections, times out or answers 502/503/504 (G5):
    'error' answers 503 with a JSON error and Retry-After; 'previous_version' sends the
    request to `previous_upstream` instead (its answers carry 'X-Aistack-Fallback:
    previous_version' and are never cached), and answers the 503 only if that is down too.
    Default: "error".
    """
    previous_upstream: NotRequired[str]
    """host:port of the previous model version; required when fallback is 'previous_version',
    refused otherwise.
    """
    unavailable_retry_after_seconds: NotRequired[int]
    """Retry-After sent with the 503 when no model answers. Default: 10."""
    cache_enabled: NotRequired[bool]
    """Answer repeated identical requests from a disk cache (S4). The key is method, URI, the
    client key (see cache_per_client) and the full request body; nginx stores its MD5 as the
    file name. Only 200 answers are stored; answers the model marks no-store/private or that
    set cookies are not; streamed (text/event-stream) answers pass through unbuffered and
    are not stored; requests with 'Cache-Control: no-cache' skip the lookup. Responses carry
    X-Cache-Status (HIT, MISS, BYPASS, EXPIRED...). Note that a cached answer to a sampled
    (temperature > 0) request is replayed verbatim within the TTL. Default: true.
    """
    cache_ttl_seconds: NotRequired[int]
    """How long a stored answer is served, and kept on disk. Default: 300."""
    cache_max_size_mb: NotRequired[int]
    """Disk the cache may use; least recently used goes first. Default: 1024."""
    cache_per_client: NotRequired[bool]
    """Put the client key header in the cache key, so a client is only served answers to its
    own requests. Keep it on unless every client is trusted: a shared cache serves a stored
    answer to anyone who sends the same body, without the model server ever checking their
    key. Cache files hold the key text (and the body), so cache_dir is as sensitive as the
    keys and the prompts. Default: true.
    """
    cache_lock: NotRequired[bool]
    """While a request fills a cache entry, identical requests wait for it instead of reaching
    the model too (nginx re-checks every 500 ms, so they wait up to 0.5 s longer than the
    first). Worth it for generation, which takes seconds; turn it off for models that answer
    in milliseconds (embeddings). Default: true.
    """
    cache_max_body_kb: NotRequired[int]
    """Largest request body that is cached, in KiB (at most 40: nginx stores the key, which
    holds the body, in a cache file header limited to 64 KiB). It is also the gateway's
    in-memory body buffer. Larger requests skip the cache (BYPASS) and always reach the
    model; nginx spools their bodies to temp_dir. Default: 32.
    """
    max_body_kb: NotRequired[int]
    """Largest request body accepted at all, in KiB; larger ones get 413. Default: 1024."""
    health_path: NotRequired[str]
    """Path nginx answers with 200 itself (liveness of the gateway, not of the model); not rate
    limited. Default: "/healthz".
    """
    status_path: NotRequired[str]
    """Path of nginx stub_status (connection counters), answered only to loopback clients
    (127.0.0.1, ::1); 403 for everyone else. Default: "/nginx_status".
    """
    worker_processes: NotRequired[Any]
    """nginx worker processes; 'auto' is one per CPU. Default: "auto"."""
    worker_connections: NotRequired[int]
    """Connections per worker. Each proxied request uses up to four (client, internal hop both
    ends, model server). Default: 4096.
    """
    worker_user: NotRequired[str]
    """OS user (optionally 'user group') the workers run as when nginx starts as root; None
    keeps nginx's build default (nobody). Ignored, with a warning, when nginx does not start
    as root (e.g. as a Kubernetes sidecar).
    """
    run_dir: NotRequired[str]
    """Directory of the pid file and the internal unix socket of the concurrency limiter. Must
    exist; workers must be able to traverse it. Default: "/run/aistack-gateway".
    """
    temp_dir: NotRequired[str]
    """Parent of nginx's temp directories (spooled bodies and responses). Must exist; nginx
    creates the subdirectories. Default: "/var/lib/aistack-gateway/tmp".
    """
    cache_dir: NotRequired[str]
    """Cache directory; nginx creates it if its parent exists. Holds prompts, answers and (with
    cache_per_client) client keys: keep it on a memory-backed (tmpfs; Kubernetes emptyDir
    medium Memory) or encrypted volume. Memory is also faster: every stored answer is a new
    file, which on a VM's ext4 disk added 3 ms (one request at a time) to 7 ms (eight at
    once) to each miss, against under 0.5 ms on tmpfs. Default:
    "/var/cache/aistack-gateway".
    """
    log_dir: NotRequired[str]
    """Directory of access.log (one JSON object per request; no bodies, no keys) and error.log.
    None logs to stdout/stderr, for containers. Default: "/var/log/aistack-gateway".
    """


class AwsModelQualityAlarmAlarmWhen(enum.StrEnum):
    BELOW = "below"
    ABOVE = "above"


class AwsModelQualityAlarmStatistic(enum.StrEnum):
    AVERAGE = "Average"
    MINIMUM = "Minimum"
    MAXIMUM = "Maximum"
    SUM = "Sum"
    SAMPLE_COUNT = "SampleCount"


class AwsModelQualityAlarmTreatMissingData(enum.StrEnum):
    BREACHING = "breaching"
    NOT_BREACHING = "notBreaching"
    MISSING = "missing"
    IGNORE = "ignore"


class AwsModelQualityAlarm(TypedDict):
    """The model-quality metric the serving code publishes, and when it alarms (G4)."""

    threshold: float
    """Alarm threshold of the metric. Required: only the team knows what a bad score is for its
    model.
    """
    metric_name: NotRequired[str]
    """Metric published in the tier's namespace aistack/<stack>/<name> with the dimension
    ModelVersion=<version>. Default: "model_quality_score".
    """
    alarm_when: NotRequired[AwsModelQualityAlarmAlarmWhen]
    """'below' for scores (accuracy, win rate), 'above' for drift or error measures. Default:
    "below".
    """
    statistic: NotRequired[AwsModelQualityAlarmStatistic]
    """How the period's values are combined. Default: "Average"."""
    period_minutes: NotRequired[int]
    """Length of one evaluation period (max a day). Default: 60."""
    evaluation_periods: NotRequired[int]
    """Periods in a row beyond the threshold before it alarms. Default: 3."""
    treat_missing_data: NotRequired[AwsModelQualityAlarmTreatMissingData]
    """A version taking traffic whose quality nobody publishes is not monitored, so by default
    silence alarms too. Publish at least once per period. Default: "breaching".
    """


class AwsServingMachineImage(TypedDict):
    """The nodes' AMI: pinned by id, or resolved from a public SSM parameter at deploy time."""

    ami_id: NotRequired[str]
    """Pinned image id (preferred, E1)."""
    ssm_parameter: NotRequired[str]
    """Parameter resolved on each `pulumi up` when amiId is unset; default: the Deep Learning
    Base AMI (Ubuntu 22.04) with driver, docker and the NVIDIA container toolkit. Default: "
    /aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-
    id".
    """
    root_device_name: NotRequired[str]
    """Root device of the AMI (/dev/sda1 on Ubuntu, /dev/xvda on Amazon Linux). Default:
    "/dev/sda1".
    """


class AwsInferenceTierArgs(TypedDict):
    """The inputs of AwsInferenceTier: its configuration, validated into
    aistack.aws.inference.args.InferenceTierArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """Region of the tier: the network's and the models bucket's, inside
    governance.allowed_regions (C4).
    """
    model_name: str
    """The model's prefix in the models bucket; also the name the runtime serves it under."""
    versions: list[AwsModelVersion]
    """Every deployable version with its traffic weight (S6, S7); at most 5, weights summing to
    100.
    """
    image: str
    """Model server image by digest (E1, S2): repo@sha256:<64 hex>. With the network's default
    egress (no internet), it must come from ECR; grant the inference role pull access
    (ContainerRegistry.grant_pull).
    """
    runtime: NotRequired[AwsInferenceTierRuntime]
    """The optimised runtime in the image (S2): how it is started and which health path it
    answers. vLLM (default) serves an OpenAI-compatible API. Default: "vllm".
    """
    runtime_args: NotRequired[list[str]]
    """Extra arguments for the runtime, after the ones aistack sets (model path, port, tensor
    parallelism), e.g. ['--max-model-len', '8192']. Default: [].
    """
    instance_type: str
    """GPU instance type from the aistack catalog, offered in the region and in the network's
    inference zones (C2). Required.
    """
    max_nodes: int
    """Most nodes per version: the cost cap (S3). Required, no default."""
    min_nodes: NotRequired[int]
    """Nodes kept per version taking traffic; default 1 (request-count scaling cannot start
    from zero). Default: 1.
    """
    target_requests_per_node_per_minute: NotRequired[int]
    """Target tracking goal: requests a node takes per minute before the group adds one (S3).
    Default 60; measure your model and set it. Default: 60.
    """
    request_logging: AwsInferenceTierRequestLogging
    """What the gateway logs per request (G2), required with no default: 'none'; 'metadata'
    (time, client address, path, status, latencies, cache status: no bodies, no keys);
    'full' (metadata plus the request body, i.e. prompts; needs logDataClassification and
    logRetentionDays). Answers are never logged.
    """
    log_data_classification: NotRequired[AwsInferenceTierLogDataClassification]
    """Highest classification of what the logs hold; required with requestLogging 'full' (G2)."""
    log_retention_days: NotRequired[int]
    """Days the tier's logs are kept; required with requestLogging 'full'. Default 30
    otherwise. A CloudWatch retention value.
    """
    fallback: NotRequired[AwsInferenceTierFallback]
    """What a node answers while its model server is down (G5): 'error' (default) is a JSON 503
    with Retry-After, while the node is replaced. 'previous_version' is refused on AWS; see
    docs/components/aws/inference-tier.md. Default: "error".
    """
    gateway: NotRequired[GatewayConfig]
    """The nginx gateway on every node (rate limit, concurrency cap, cache); its listen port is
    the network's gateway port, and the tier sets its fallback. Default: its own defaults.
    """
    gateway_image: NotRequired[str]
    """nginx image by digest to run the gateway from (e.g. mirrored to ECR). Required unless
    machineImage.amiId pins an image that already has nginx: private nodes cannot reach a
    package mirror to install it, and a node that cannot start its gateway is replaced
    forever.
    """
    public: NotRequired[bool]
    """Internet-facing load balancer; needs a network with public_endpoint. Off: internal,
    reachable from the VPC and what is peered to it. Default: false.
    """
    certificate_arn: NotRequired[str]
    """ACM certificate for HTTPS on 443 (TLS 1.3/1.2 policy); HTTP then only redirects. Without
    one the load balancer speaks plain HTTP on 80. Required for a public load balancer, and
    when governance.data_classification is confidential or restricted, unless
    allow_plaintext_http.
    """
    allow_plaintext_http: NotRequired[bool]
    """Allow plain HTTP without a certificate where one is required: on a public load balancer,
    or for confidential or restricted data on an internal one. Off: prompts and answers with
    such data never travel unencrypted. Default: false.
    """
    allow_container_metadata_access: NotRequired[bool]
    """Let the serving containers reach the instance metadata service (hop limit 2) and with it
    the inference role. Off: the model server, third-party code, gets no AWS credentials;
    the host's scripts pull the image and sync the model. Turn on only for a runtime that
    calls AWS itself. Default: false.
    """
    waf_rate_limit: NotRequired[int]
    """Requests one client IP may send in 5 minutes before WAF blocks it with 429 (S3). Default
    2000 (about 7 per second): far above one user, far below a flood. Default: 2000.
    """
    waf_count_only_rules: NotRequired[list[str]]
    """Rules of AWSManagedRulesCommonRuleSet that only count instead of block. Default:
    SizeRestrictions_BODY, which blocks every body over 8 KB, i.e. every long prompt. Add
    e.g. CrossSiteScripting_BODY if prompts carry code. Default: ["SizeRestrictions_BODY"].
    """
    waf_log_all_requests: NotRequired[bool]
    """Log every request WAF sees. Off: only blocked and counted ones (cost, and fewer copies
    of request metadata). Default: false.
    """
    waf_log_retention_days: NotRequired[int]
    """Days WAF logs are kept. Default: 90."""
    latency_slo_ms: int
    """p99 latency objective; the latency alarm fires above it (S5). Required: generation
    latency depends on the model and output length.
    """
    error_rate_percent: NotRequired[float]
    """5xx share of requests that alarms (S5). Default 1%. Default: 1.0."""
    quality: AwsModelQualityAlarm
    """The model-quality alarm (G4); required, with its threshold."""
    alarm_topic_arn: NotRequired[pulumi.Input[str]]
    """SNS topic for alarm and recovery notifications."""
    machine_image: NotRequired[AwsServingMachineImage]
    """The nodes' AMI; default: the Deep Learning Base AMI, resolved at deploy time. Default:
    its own defaults.
    """
    root_volume_gb: NotRequired[int]
    """Encrypted gp3 root volume: images are large, and without NVMe the model is copied here
    too. Default: 200.
    """
    boot_timeout_minutes: NotRequired[int]
    """How long a new node may take to copy the model, pull the images and answer; past it the
    group replaces the node. At most 120 (lifecycle hook limit). Default: 45.
    """
    allow_destroy_logs: NotRequired[bool]
    """Let `pulumi destroy` delete the log groups and their keys. Default: false."""
    vpc_id: pulumi.Input[str]
    """The network's vpcId."""
    subnet_ids: pulumi.Input[list[str]]
    """The network's inferenceSubnetIds: where nodes run."""
    security_group_id: pulumi.Input[str]
    """The network's inferenceSecurityGroupId: the nodes' security group."""
    alb_subnet_ids: pulumi.Input[list[str]]
    """The network's albSubnetIds (public ones when the network has publicEndpoint)."""
    alb_security_group_id: pulumi.Input[str]
    """The network's albSecurityGroupId."""
    vpc_cidr_block: str
    """The network's cidrBlock (plain: it is written into the gateway's configuration): the
    only sources whose X-Forwarded-For the gateway trusts. Only the load balancer reaches
    the nodes.
    """
    instance_role_arn: pulumi.Input[str]
    """The role the nodes run as (AwsWorkloadIdentity roleArns["inference"])."""
    instance_profile_arn: pulumi.Input[str]
    """Its instance profile (AwsWorkloadIdentity instanceProfileArns["inference"])."""
    models_bucket_name: pulumi.Input[str]
    """The models bucket's bucketName (an AwsDatasetBucket of kind models in the same region).
    Nodes read <modelName>/ from it, nothing else.
    """
    models_bucket_arn: pulumi.Input[str]
    """The models bucket's bucketArn."""
    models_kms_key_arn: pulumi.Input[str]
    """The models bucket's kmsKeyArn: its readers decrypt with it, through S3 only."""


class AwsKarpenterGpuPoolArgs(TypedDict):
    """The inputs of AwsKarpenterGpuPool: its configuration, validated into
    aistack.aws.karpenter_gpu_pool.KarpenterGpuPoolArgs as a Python caller's is, and its
    wiring.
    """

    governance: Governance
    """Owner, cost centre, allowed regions; required."""
    region: str
    """The cluster's region; must be allowed (C4)."""
    cluster_name: str
    """The EKS cluster's name (the access entry is created on it)."""
    controller_role_name: str
    """Name of the IAM role the Karpenter controller runs as (IRSA or Pod Identity). It gets an
    inline policy to read this pool's interruption queue and to pass the node role to EC2;
    the rest of its policy is the installer's.
    """
    karpenter_namespace: NotRequired[str]
    """Namespace of the Karpenter controller (used in helm_values()). Default: "kube-system"."""
    karpenter_service_account: NotRequired[str]
    """ServiceAccount of the Karpenter controller (used in helm_values()). Default:
    "karpenter".
    """
    instance_types: list[str]
    """GPU instance types from the aistack catalog (`aistack catalog`), all offered in the
    region (C2). Several sizes widen the Spot pools Karpenter can choose from.
    """
    max_spot_gpus: int
    """GPUs the Spot NodePool may run at most: its `limits.nvidia.com/gpu` and the Spot
    flavor's quota in the queue (C3). 0: no Spot NodePool.
    """
    max_on_demand_gpus: int
    """GPUs the on-demand fallback NodePool may run at most (C3). 0: no on-demand NodePool."""
    ami_alias: str
    """EKS-optimized AL2023 AMI pinned to a release, 'al2023@vYYYYMMDD' (e.g.
    'al2023@v20260714'), one with images for the cluster's Kubernetes version. Required;
    '@latest' is refused: a new AMI release would drift and replace every node, running jobs
    included. Releases before v20240924 are refused: they have no NVIDIA variant, so
    Karpenter finds no AMI for GPU instance types.
    """
    subnet_selector_tags: dict[str, str]
    """Tags selecting the (private) subnets nodes launch in, e.g. {'karpenter.sh/discovery':
    '<cluster>'}.
    """
    security_group_selector_tags: dict[str, str]
    """Tags selecting the node security groups, e.g. the cluster's node security group's
    {'karpenter.sh/discovery': '<cluster>'}.
    """
    consolidate_after: NotRequired[str]
    """How long a node must be empty before Karpenter removes it (C5). Default 300s: long
    enough for the next job of a queue to land, short enough that an idle GPU node costs
    minutes. 'Never' is refused. Default: "300s".
    """
    expire_after: NotRequired[str]
    """Nodes older than this are replaced, so patched AMIs and kernels reach long-lived nodes.
    Default 720h (Karpenter's default). 'Never' is refused. Default: "720h".
    """
    termination_grace_period: NotRequired[str]
    """How long a draining node waits for pods that block eviction
    (karpenter.sh/do-not-disrupt, PDBs) before they are deleted: bounds how long an expired
    node keeps billing. Default 48h; keep it above the jobs' wall-clock limit (T5). Default:
    "48h".
    """
    root_volume_gib: NotRequired[int]
    """Encrypted gp3 root volume (images are big). Default: 200."""
    root_volume_kms_key_arn: NotRequired[str]
    """KMS key for the root volume; default: the account's EBS default key."""
    interruption_queue: NotRequired[bool]
    """Create the interruption queue and its EventBridge rules. Karpenter reads one queue per
    cluster (settings.interruptionQueue is a single name) and the rules match every instance
    of the account and region: a second pool on the same cluster sets false and shares the
    first pool's queue. Default: true.
    """
    cni_policy: NotRequired[bool]
    """Attach AmazonEKS_CNI_Policy to the node role. Turn off when the VPC CNI (aws-node) has
    its own role through IRSA or Pod Identity. Default: true.
    """
    session_manager: NotRequired[bool]
    """Attach AmazonSSMManagedInstanceCore: Session Manager, not SSH keys. Default: true."""


class GcpProjectServicesArgs(TypedDict):
    """The inputs of GcpProjectServices: its configuration, validated into
    aistack.gcp.project_services.ProjectServicesArgs as a Python caller's is, and its
    wiring.
    """

    project: str
    """Project ID the APIs are enabled on (6-30 characters, e.g. 'team-ml-prod'). Explicit:
    never the provider's default project.
    """
    services: NotRequired[list[str]]
    """APIs to enable; default: every API aistack's GCP components use. Extra APIs are added
    with `extra_services`. Default: ["artifactregistry.googleapis.com",
    "billingbudgets.googleapis.com", "binaryauthorization.googleapis.com",
    "cloudbuild.googleapis.com", "cloudfunctions.googleapis.com", "cloudkms.googleapis.com",
    "cloudquotas.googleapis.com", "cloudresourcemanager.googleapis.com",
    "compute.googleapis.com", "container.googleapis.com",
    "containerscanning.googleapis.com", "dns.googleapis.com", "eventarc.googleapis.com",
    "iam.googleapis.com", "iamcredentials.googleapis.com", "logging.googleapis.com",
    "monitoring.googleapis.com", "notebooks.googleapis.com", "pubsub.googleapis.com",
    "run.googleapis.com", "serviceusage.googleapis.com", "storage.googleapis.com",
    "sts.googleapis.com"].
    """
    extra_services: NotRequired[list[str]]
    """More APIs the team's own resources need, e.g. 'bigquery.googleapis.com'. Default: []."""


class GcpDatasetBucketKind(enum.StrEnum):
    DATASET = "dataset"
    CHECKPOINTS = "checkpoints"
    MODELS = "models"
    LOGS = "logs"


class GcpDatasetBucketArgs(TypedDict):
    """The inputs of GcpDatasetBucket: its configuration, validated into
    aistack.gcp.dataset_bucket.DatasetBucketArgs as a Python caller's is, and its wiring.
    """

    kind: GcpDatasetBucketKind
    """dataset, checkpoints, models or logs: sets lifecycle, soft delete and, for logs, that
    Cloud Storage may write usage logs here.
    """
    region: str
    """Single region of the bucket, e.g. 'europe-west4': the compute's region (D2) and in
    governance.allowed_regions (C4). Multi- and dual-regions ('EU', 'NAM4') are refused:
    they place data in regions nobody chose.
    """
    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    dataset: NotRequired[DatasetMetadata]
    """Required for kind 'dataset': lineage, licence, basis (D4-D6)."""
    bucket_name: NotRequired[str]
    """Physical name (global); default: the logical name plus a suffix."""
    noncurrent_days: NotRequired[int]
    """Days an overwritten version is kept (D1); default by kind."""
    keep_noncurrent_versions: NotRequired[int]
    """Newest overwritten versions kept regardless of age."""
    expire_current_after_days: NotRequired[int]
    """Delete live objects after N days (logs only by default)."""
    soft_delete_days: NotRequired[int]
    """Days deleted objects stay restorable (0, or 7 to 90); default by kind."""
    kms_key_name: NotRequired[str]
    """Share an existing Cloud KMS key (its id, in the bucket's region); default: a new key
    ring and key, rotated every 90 days.
    """
    allow_destroy_with_data: NotRequired[bool]
    """Let `pulumi destroy` delete the bucket and every object. Off: the bucket is retained,
    with deletion_policy PREVENT (and protected in prod). Default: false.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """
    access_logs_bucket_name: NotRequired[pulumi.Input[str]]
    """Name of the project's logs bucket (a GcpDatasetBucket of kind logs): this bucket's usage
    logs go there, under usage/<name>.
    """


class GcpKubernetesServiceAccount(TypedDict):
    """A Kubernetes service account whose pods act as the workload (GKE Workload Identity)."""

    namespace: str
    """Namespace of the service account."""
    service_account: str
    """Name of the Kubernetes service account."""


class GcpWorkload(TypedDict):
    """One service account, and who may act as it."""

    name: str
    """The workload, e.g. 'training': a slug unique among the workloads. The account id is
    '<accountPrefix>-<name>' (shortened with a hash past 30 characters).
    """
    account_id: NotRequired[str]
    """Explicit service account id (6-30 characters, [a-z]([-a-z0-9]*[a-z0-9])); default:
    derived from accountPrefix and the name.
    """
    display_name: NotRequired[str]
    """Console name; default 'aistack <workload>'."""
    description: NotRequired[str]
    """What runs as the account (at most 256 bytes, the IAM API's limit). Default: ""."""
    kubernetes_service_accounts: NotRequired[list[GcpKubernetesServiceAccount]]
    """GKE service accounts whose pods act as this workload. Default: none. Default: []."""
    project_roles: NotRequired[list[str]]
    """Predefined or custom roles granted on the project, e.g. 'roles/logging.logWriter'.
    Default: none; data access comes from the components that own the data. Basic roles
    (owner, editor, viewer) are refused. Default: [].
    """


class GcpWorkloadIdentityKubernetesMode(enum.StrEnum):
    IMPERSONATION = "impersonation"
    PRINCIPAL = "principal"


class GcpGithubActions(TypedDict):
    """A CI service account GitHub Actions can act as, for one repository's refs."""

    repository: str
    """'owner/name' of the one repository whose workflows may sign in, spelt as GitHub shows it
    (the claims are compared exactly). No wildcards.
    """
    repository_owner_id: NotRequired[str]
    """The owner's numeric GitHub id (`gh api users/<owner> --jq .id`). When set it is pinned
    too, so an owner name freed and re-registered by someone else cannot sign in.
    Recommended.
    """
    branches: NotRequired[list[str]]
    """Branch names (e.g. 'main') whose runs may sign in; matched as sub
    'repo:<repository>:ref:refs/heads/<branch>'. No wildcards. Default: [].
    """
    environments: NotRequired[list[str]]
    """GitHub environments (e.g. 'prod') whose jobs may sign in; matched as sub
    'repo:<repository>:environment:<env>'. No wildcards. Default: [].
    """
    workload: NotRequired[str]
    """Workload name of the CI service account. Default: "ci"."""
    pool_id: NotRequired[str]
    """Workload identity pool id before the suffix; default '<accountPrefix>-github'. 4-32
    characters of [a-z0-9-] with the suffix, no 'gcp-'.
    """
    id_suffix: NotRequired[str]
    """Ends the pool and provider ids. Pools and providers deleted by `pulumi destroy` keep
    their ids reserved for 30 days: change the suffix (e.g. '2') to bring the stack up again
    meanwhile, or undelete and import them. Default: "1".
    """


class GcpWorkloadIdentityArgs(TypedDict):
    """The inputs of GcpWorkloadIdentity: its configuration, validated into
    aistack.gcp.workload_identity.WorkloadIdentityArgs as a Python caller's is, and its
    wiring.
    """

    governance: Governance
    """Owner, cost centre, environment; required. In prod the pool and provider are protected:
    deleting them reserves their ids for 30 days.
    """
    workloads: NotRequired[list[GcpWorkload]]
    """The service accounts to create, one per workload. Default: training, inference,
    notebook, each with no roles. Default: [{"name": "training", "description": "aistack
    training nodes and jobs"}, {"name": "inference", "description": "aistack inference
    servers"}, {"name": "notebook", "description": "aistack notebooks"}].
    """
    account_prefix: NotRequired[str]
    """Starts every account id ('<prefix>-<workload>'); default: the component's name. Account
    ids are unique per project: give each stack sharing a project its own prefix.
    """
    workload_pool_exists: NotRequired[bool]
    """A GKE cluster with Workload Identity already exists in the project (e.g. in another
    stack), so its pool `<project>.svc.id.goog` exists. Otherwise pass the cluster as
    `cluster=`: Kubernetes bindings fail until the pool exists. Default: false.
    """
    kubernetes_mode: NotRequired[GcpWorkloadIdentityKubernetesMode]
    """How GKE pods act as a workload: 'impersonation' (default; the Kubernetes service account
    impersonates the workload's account, which works with every Google API) or 'principal'
    (projectRoles are granted to the Kubernetes service account's own principal; some APIs
    do not accept principals yet). Default: "impersonation".
    """
    github: NotRequired[GcpGithubActions]
    """A CI service account for GitHub Actions through a workload identity pool, with no roles
    until the caller grants them. Default: none.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """
    cluster_id: NotRequired[pulumi.Input[str]]
    """The id of the GKE cluster (with Workload Identity) whose pool <project>.svc.id.goog the
    Kubernetes bindings name: they wait for it. Needed for kubernetesServiceAccounts unless
    workloadPoolExists.
    """


class GcpContainerRegistryArgs(TypedDict):
    """The inputs of GcpContainerRegistry: its configuration, validated into
    aistack.gcp.container_registry.ContainerRegistryArgs as a Python caller's is, and its
    wiring.
    """

    region: str
    """Region of the repository, e.g. 'europe-west4': in governance.allowed_regions (C4), and
    where the GPU nodes pull from. Multi-regions ('us', 'europe', 'asia') are refused: they
    place images in regions nobody chose.
    """
    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    repository_id: NotRequired[str]
    """The repository id (lowercase letters, digits, hyphens; 63 characters at most); default:
    the component's name and the stack's digest, as ids are unique per project and region
    and the project's other stacks pick theirs.
    """
    description: NotRequired[str]
    """Shown in the console. Default: "aistack container images"."""
    keep_recent_versions: NotRequired[int]
    """Newest versions of each image never deleted by cleanup (default 20): enough to roll back
    months of releases, few enough that storage stays flat. Default: 20.
    """
    release_tag_prefixes: NotRequired[list[str]]
    """Tag prefixes that mark releases (default 'v', 'release-'): versions so tagged are
    deleted once older than releaseExpiryDays unless among the newest keepRecentVersions.
    Versions with other tags are never deleted. Default: ["v", "release-"].
    """
    release_expiry_days: NotRequired[int]
    """Age after which a release beyond the newest keepRecentVersions is deleted (default 90
    days). Default: 90.
    """
    untagged_expiry_days: NotRequired[int]
    """Days an untagged version (build leftovers, superseded pushes) is kept (default 7): long
    enough to finish a rollout that used one by digest. Default: 7.
    """
    kms_key_name: NotRequired[str]
    """Encrypt with this existing Cloud KMS key (its id, in the repository's region); default:
    a new key ring and key, rotated every 90 days. Artifact Registry fixes the key at
    repository creation.
    """
    allow_unscanned: NotRequired[bool]
    """Turn vulnerability scanning off for this repository. Off: every pushed image is scanned
    (Artifact Analysis bills per scanned image). Default: false.
    """
    allow_destroy_with_images: NotRequired[bool]
    """Let `pulumi destroy` delete the repository with every image. Off: the repository and its
    key are retained, deletion_policy PREVENT (protected in prod). Default: false.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """


class GcpBudgetGuardArgs(TypedDict):
    """The inputs of GcpBudgetGuard: its configuration, validated into
    aistack.gcp.budget_guard.BudgetGuardArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """Region of the function, its state bucket and its trigger. Must be in
    governance.allowed_regions (C4). The kill switch acts project-wide. Explicit: never the
    provider's default.
    """
    billing_account: str
    """The Cloud Billing account paying for the project, 'XXXXXX-XXXXXX-XXXXXX' (Billing >
    Account management). Required: budgets live on the billing account, and the caller needs
    roles/billing.costsManager there.
    """
    monthly_limit: float
    """Monthly budget for the stack, in `currency_code` (the billing account's currency, e.g.
    EUR). Required: a budget is the first cost control (C3). Was monthlyLimitUsd (still
    accepted, deprecated).
    """
    daily_limit: NotRequired[float]
    """Daily limit, in `currency_code`. Default: the monthly limit / 30, rounded up to a whole
    unit (capped at the monthly limit), so a day at the monthly pace is just inside. Was
    dailyLimitUsd (still accepted, deprecated).
    """
    currency_code: NotRequired[str]
    """The billing account's currency: the Budget API refuses a budget in another one. The
    limits are in this currency. Default: "USD".
    """
    alert_emails: list[str]
    """Who is told (1-5 addresses: a budget takes at most 5 notification channels). Each
    becomes a Cloud Monitoring e-mail channel.
    """
    monthly_actual_thresholds: NotRequired[list[float]]
    """Fractions of the monthly limit (1.0 = 100 %, as the Budget API counts) at which actual
    spend alerts. Default halfway, time to act, limit reached. Default: [0.5, 0.8, 1.0].
    """
    monthly_forecast_threshold: NotRequired[float]
    """Alert when the month's forecast passes this fraction. Default: 1.0."""
    notify_billing_admins: NotRequired[bool]
    """Also mail the billing account's administrators and users (the budget's default
    recipients). On: they are the fallback when a channel breaks, as AWS's direct mails are.
    Set false on a shared billing account where they would hear of every stack. Default:
    true.
    """
    filter_by_stack_label: NotRequired[bool]
    """Count only resources labelled aistack-stack=<stack> (a budget filter takes one label).
    Off: the whole project counts, which is the safer default because unlabelled spend
    (networking, support) is real spend too. Default: false.
    """
    kill_switch: NotRequired[bool]
    """Scale the stack's training node pools and managed instance groups (labelled
    aistack-stack=<stack>, aistack-workload=training) to zero when actual spend reaches 100
    % of the monthly limit. Off by default: it stops running jobs. Default: false.
    """
    kill_switch_dry_run: NotRequired[bool]
    """The kill switch only logs what it would stop. Needs kill_switch. Default: false."""
    allow_disable_billing: NotRequired[bool]
    """After scaling to zero, also detach the project from its billing account. Stops every
    paid service in the project, can delete resources and lose data; needs kill_switch.
    Never the default. Default: false.
    """
    kms_key_name: NotRequired[str]
    """Cloud KMS key (in `region`) for the budget topic and the function's image repository.
    Default: a key of the guard's own, as every aistack component that stores anything has
    (CMEK). The guard grants the Pub/Sub and Artifact Registry service agents
    Encrypter/Decrypter on it. Was topicKmsKeyName (still accepted, deprecated).
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """
    access_logs_bucket_name: NotRequired[pulumi.Input[str]]
    """Name of the project's logs bucket (a GcpDatasetBucket of kind logs): the guard's state
    bucket's usage logs go there, under usage/<name>.
    """


class GcpGpuNeedMarket(enum.StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"


class GcpGpuNeed(TypedDict):
    """A pool's GPU need as configuration: `{pool, region, machineTypes, maxNodes, market}`."""

    pool: str
    """The pool's name; it appears in the request's summary."""
    region: str
    """Region the pool runs in, e.g. 'europe-west4': GPU quotas are per region. Must be in
    governance.allowed_regions (C4). Required.
    """
    machine_types: list[str]
    """Every GCP GPU machine type the pool may launch, e.g. ['a3-highgpu-8g']. Required; the
    one with the most GPUs sizes the request.
    """
    max_nodes: int
    """The pool's maximum node count (its autoscaling maximum). Required."""
    market: GcpGpuNeedMarket
    """'spot' or 'on-demand'. Required, no default: Spot VMs count against the PREEMPTIBLE-
    quota, a different quota from on-demand.
    """
    surge_nodes: NotRequired[int]
    """Nodes above maxNodes the pool may run for a while: GKE surge upgrades add maxSurge nodes
    (1 by default), a MIG rolling update its maxSurge. Default 0. Default: 0.
    """


class GcpGpuQuotaMode(enum.StrEnum):
    FILE = "file"
    CHECK = "check"


class GcpGpuQuotaArgs(TypedDict):
    """The inputs of GcpGpuQuota: its configuration, validated into
    aistack.gcp.gpu_quota.GpuQuotaArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    contact_email: str
    """E-mail address Google may contact about the request. Required: the Cloud Quotas API
    requires it for an increase, and the account must hold quota update permission on the
    project.
    """
    needs: NotRequired[list[GcpGpuNeed]]
    """Pools sized from configuration, each {pool, region, machineTypes, maxNodes, market}.
    Default: none, for stacks that pass pool components as `pools=`; at least one need is
    required across both. Default: [].
    """
    headroom_percent: NotRequired[float]
    """Extra GPUs on top of the pools' maximum, in percent, rounded up to whole machines of the
    smallest type the pools in that quota launch (a VM takes all its GPUs or none). Default
    0: pools report their surge themselves; add a percentage for capacity outside the pools
    (ad-hoc VMs, notebooks). Default: 0.
    """
    include_global_ceiling: NotRequired[bool]
    """Also request GPUS-ALL-REGIONS-per-project, the project-wide ceiling (0 in new projects).
    Default on: without it no GPU VM starts, whatever the regional grants. Off only where an
    organisation files it centrally. Default: true.
    """
    justification: NotRequired[str]
    """Why the GPUs are needed, sent with every request; default: the sizing summary (pools,
    machine types, node counts).
    """
    mode: NotRequired[GcpGpuQuotaMode]
    """'file': file a preference per quota (the stack that owns the project's quotas). 'check':
    file nothing and read each quota in force, warning where it falls short: for the other
    stacks of a project whose quotas one stack files (there is one preference per quota and
    dimensions in a project, sized by whoever files it; a second stack filing the same one
    fails with 409). AIS-C1-02 takes a checked need as delegated to the project's quota
    stack. Default: "file".
    """
    adopt_filed: NotRequired[Any]
    """Take over the preferences an earlier deployment filed (Pulumi's import, by their
    project-level ids) instead of creating them: `true` for all, or the preference ids that
    were filed (when a new pool adds a quota, its preference is new: an import of it would
    fail). A preference can never be deleted and there is one per quota and dimensions in a
    project, so `destroy` only forgets it and the next create of it fails with 409: set this
    for the stack's deployments after its first. Default off: the project's first. Default:
    false.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """


class GcpFlowLogsAggregationInterval(enum.StrEnum):
    INTERVAL_5_SEC = "INTERVAL_5_SEC"
    INTERVAL_30_SEC = "INTERVAL_30_SEC"
    INTERVAL_1_MIN = "INTERVAL_1_MIN"
    INTERVAL_5_MIN = "INTERVAL_5_MIN"
    INTERVAL_10_MIN = "INTERVAL_10_MIN"
    INTERVAL_15_MIN = "INTERVAL_15_MIN"


class GcpFlowLogsMetadata(enum.StrEnum):
    INCLUDE_ALL_METADATA = "INCLUDE_ALL_METADATA"
    EXCLUDE_ALL_METADATA = "EXCLUDE_ALL_METADATA"


class GcpFlowLogs(TypedDict):
    """VPC Flow Logs of every tier subnet (CKV_GCP_26). Billed as Cloud Logging ingestion
    ($0.50/GiB beyond the free 50 GiB per project per month, Logging pricing): volume grows
    with connections, sampling and metadata, not with bytes moved.
    """

    aggregation_interval: NotRequired[GcpFlowLogsAggregationInterval]
    """How long flows are aggregated into one record. Default the API's 5 s (finest detail for
    an investigation); 1-15 min cut volume several times. Default: "INTERVAL_5_SEC".
    """
    flow_sampling: NotRequired[float]
    """Fraction of flows recorded, 0-1. Default 0.5 (the API's): half the cost of 1.0 and still
    every long-lived connection (NCCL rings, serving). Default: 0.5.
    """
    metadata: NotRequired[GcpFlowLogsMetadata]
    """Default: include VM names, zones and service accounts, which is what answers 'which
    workload opened this'; EXCLUDE saves roughly a third of the volume. Default:
    "INCLUDE_ALL_METADATA".
    """


class GcpNetworkArgs(TypedDict):
    """The inputs of GcpNetwork: its configuration, validated into
    aistack.gcp.network.args.NetworkArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """Region of every subnet: explicit (never the provider's default), in
    governance.allowed_regions (C4), the dataset bucket's region (D2), and offering the
    tiers' machine types in at least one zone (C2).
    """
    cidr_block: NotRequired[str]
    """Private range the tier subnets are carved from (a GCP VPC has no range of its own): a
    quarter per tier (training, inference, notebook) and the start of the last quarter for
    the proxy-only subnet. RFC 1918 or 100.64.0.0/10, /16 to /20. Default: "10.40.0.0/16".
    """
    training_machine_types: NotRequired[list[str]]
    """GPU machine types training runs on (catalog names, e.g. 'a3-highgpu-8g'). Planned zones:
    those offering ALL of them. Empty: no training tier. At least one of training and
    inference is required. Default: [].
    """
    inference_machine_types: NotRequired[list[str]]
    """GPU machine types that serve; as for training. Empty: no inference tier. Default: []."""
    notebook: NotRequired[bool]
    """Add a notebook tier (own subnet) and private zones for the domains Workbench uses. Off.
    Default: false.
    """
    notebook_machine_types: NotRequired[list[str]]
    """GPU machine types notebooks use, to plan notebook zones; empty: every zone of the region
    the catalog knows. Only with notebook: true. Default: [].
    """
    gke_secondary_ranges: NotRequired[bool]
    """Give the training subnet the two secondary ranges a VPC-native GKE cluster needs (pods,
    services), named by `pods_range_name`/`services_range_name`. Unused ranges cost nothing.
    Default: true.
    """
    pods_cidr: NotRequired[str]
    """Pods secondary range (GKE default size /14: 1,024 nodes at 110 pods). Default:
    "10.64.0.0/14".
    """
    services_cidr: NotRequired[str]
    """Services secondary range. Default: "10.68.0.0/20"."""
    gke_control_plane_cidr: NotRequired[str]
    """A peering-based private GKE control plane's /28 (master_ipv4_cidr_block): training nodes
    may then reach it on 443 and 10250. Unset: Private Service Connect clusters use an
    address in the training subnet, which training may already reach.
    """
    gke_control_plane_ports: NotRequired[list[int]]
    """With gkeControlPlaneCidr: the ports the private control plane may open on the nodes
    beyond 443 and 10250, which GKE's own rule allows. The API server calls admission
    webhooks and aggregated APIs straight at their pods: Kueue's and JobSet's webhooks
    (9443), Kueue's visibility API (8082), the Custom Metrics Stackdriver Adapter (6443). A
    webhook it cannot reach with failurePolicy Fail refuses what it covers (GKE docs,
    private clusters, 'Add firewall rules'). Default: [6443, 8082, 9443].
    """
    proxy_only_subnet: NotRequired[bool]
    """Add the proxy-only subnet (purpose REGIONAL_MANAGED_PROXY, role ACTIVE) that regional
    and internal Application Load Balancers need, one per region and VPC, and let its
    proxies reach inference on `gateway_port`. Off. Default: false.
    """
    training_health_check_port: NotRequired[int]
    """Port a training managed instance group's autohealing health check probes: Google's
    health checkers may then reach training nodes on it (and only it). Unset: no
    health-check rule for training; a MIG with autohealing and no rule sees every node
    unhealthy and recreates it.
    """
    gateway_port: NotRequired[int]
    """Port inference serves on: the only port health checkers and load balancer proxies may
    reach. Default 8080. Default: 8080.
    """
    nat: NotRequired[bool]
    """Cloud Router + Cloud NAT (AUTO_ONLY addresses, errors logged), a route to the internet
    and egress to `nat_egress_ports` anywhere. Off: nodes reach Google APIs only (Private
    Google Access), no PyPI, Hugging Face or public registries. NAT costs $0.0014 per
    VM-hour (capped at $0.044/h), $0.005 per address-hour and $0.045 per GiB both ways
    (Cloud NAT pricing). Default: false.
    """
    nat_egress_ports: NotRequired[list[int]]
    """TCP ports nodes may reach on the internet through NAT; default HTTPS only. Default:
    [443].
    """
    flow_logs: NotRequired[GcpFlowLogs]
    """See FlowLogs. Default: its own defaults."""
    allow_iap_ssh: NotRequired[bool]
    """Allow SSH (22) from Identity-Aware Proxy's range 35.235.240.0/20 to every tier, for
    `gcloud compute ssh --tunnel-through-iap` (IAM decides who). Off: no SSH from anywhere;
    OS Login and the serial console remain. Default: false.
    """
    extra_private_dns_domains: NotRequired[list[str]]
    """More Google domains to answer with the private.googleapis.com addresses, each a private
    zone. Always answered: googleapis.com, pkg.dev, gcr.io, and with notebook: true
    Workbench's domains (notebooks.cloud.google.com, notebooks.googleusercontent.com,
    kernels.googleusercontent.com, notebooks.byoid.googleusercontent.com). Default: [].
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """
    service_accounts: dict[str, pulumi.Input[str]]
    """The service account e-mail each tier runs as, by tier (training, inference, notebook;
    GcpWorkloadIdentity emails[...]): the firewall rules name them. The tiers are plain:
    they are checked against the network's tiers.
    """
    dataset_region: NotRequired[str]
    """The dataset GcpDatasetBucket's region (plain: checked before anything is created): the
    network must be in it (D2).
    """


class GcpAuthorizedNetwork(TypedDict):
    """A network allowed to reach the control plane (master authorized networks)."""

    cidr_block: str
    """CIDR allowed to reach the control plane."""
    display_name: NotRequired[str]
    """What the range is. Default: ""."""


class GcpGkeClusterReleaseChannel(enum.StrEnum):
    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"
    EXTENDED = "EXTENDED"


class GcpGkeClusterGatewayApiChannel(enum.StrEnum):
    CHANNEL_STANDARD = "CHANNEL_STANDARD"
    CHANNEL_DISABLED = "CHANNEL_DISABLED"


class GcpGkeClusterArgs(TypedDict):
    """The inputs of GcpGkeCluster: its configuration, validated into
    aistack.gcp.gke_cluster.GkeClusterArgs as a Python caller's is, and its wiring.
    """

    region: str
    """Region of the (regional) cluster, e.g. 'europe-west4'; required. Must be in
    governance.allowedRegions (C4) and equal the dataset buckets' region (D2).
    """
    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    cluster_name: NotRequired[str]
    """The cluster's GKE name (at most 40 characters); default: the logical name and the
    stack's digest (a cluster name is unique in its location, and the project's other stacks
    pick theirs). Fixed: GKE cannot rename a cluster.
    """
    network: Any
    """The VPC's self-link or id, e.g. gcp.Network's `network_self_link`. Required."""
    subnetwork: Any
    """The nodes' subnetwork self-link or id, in `region`, with Private Google Access on
    (private nodes reach Google APIs through it). Required.
    """
    pods_range_name: Any
    """Name of the subnetwork's secondary range for pods (VPC-native)."""
    services_range_name: Any
    """Name of the subnetwork's secondary range for Services."""
    master_ipv4_cidr_block: NotRequired[str]
    """The control plane's private /28, unused elsewhere in the VPC. Default 172.16.0.0/28.
    Default: "172.16.0.0/28".
    """
    authorized_networks: NotRequired[list[GcpAuthorizedNetwork]]
    """Ranges that may reach the control plane, e.g. the VPC range of a bastion or CI runner.
    Default none: only the cluster's own VPC, privately. Default: [].
    """
    allow_public_endpoint: NotRequired[bool]
    """Serve the control plane on a public IP too, reachable from `authorized_networks` only
    (which must then be set). Off: private endpoint only; deploy from inside the VPC or with
    allow_dns_endpoint. Default: false.
    """
    allow_dns_endpoint: NotRequired[bool]
    """Enable the control plane's DNS endpoint from outside the VPC; every request still needs
    IAM (GKE docs, 'About network isolation': DNS-based endpoint). A way to deploy a private
    cluster from a laptop or CI. Default off. Default: false.
    """
    release_channel: NotRequired[GcpGkeClusterReleaseChannel]
    """GKE release channel: Google upgrades the control plane and nodes with patches. Default
    REGULAR. Default: "REGULAR".
    """
    system_machine_type: NotRequired[str]
    """Machine type of the system pool (kube-system, operators). Default e2-standard-4.
    Default: "e2-standard-4".
    """
    system_max_nodes: NotRequired[int]
    """Most nodes in the system pool (it keeps at least 1). Default: 3."""
    gateway_api_channel: NotRequired[GcpGkeClusterGatewayApiChannel]
    """Gateway API CRDs GKE installs and manages (HTTPRoute for serving). Default the standard
    channel. Default: "CHANNEL_STANDARD".
    """
    secrets_kms_key: NotRequired[str]
    """Cloud KMS key (in the cluster's region) encrypting Kubernetes Secrets in etcd on top of
    Google's encryption; the GKE service agent needs Encrypter/Decrypter on it. Default: a
    key of the cluster's own, granted to the GKE service agent.
    """
    allow_google_managed_secrets: NotRequired[bool]
    """Leave Kubernetes Secrets under Google's default encryption only (no application-layer
    key). Default off: the stacks keep every store under a customer key. Default: false.
    """
    rbac_security_group: NotRequired[str]
    """Google Groups for RBAC ('gke-security-groups@<domain>'): needs a Google Workspace or
    Cloud Identity organisation. Default none.
    """
    node_account_id: NotRequired[str]
    """Account id of the node service account; default `<name>-nodes`, shortened to 30
    characters.
    """
    allow_destroy: NotRequired[bool]
    """Create the cluster without deletion protection. Off: `pulumi destroy` fails until an
    `up` turns protection off (deliberate, two steps). Default: false.
    """
    log_retention_days: NotRequired[int]
    """Days the cluster's regional log bucket keeps its system and workload logs (T6); Cloud
    Logging buckets keep 1 to 3650 days. Default: 90.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """


class GcpGpuNodePoolMarket(enum.StrEnum):
    SPOT = "spot"
    ON_DEMAND = "on-demand"
    FLEX_START = "flex-start"


class GcpGpuNodePoolWorkload(enum.StrEnum):
    TRAINING = "training"
    SERVING = "serving"


class GcpGpuNodePoolGpuDriverVersion(enum.StrEnum):
    DEFAULT = "DEFAULT"
    LATEST = "LATEST"


class GcpGpuNodePoolArgs(TypedDict):
    """The inputs of GcpGpuNodePool: its configuration, validated into
    aistack.gcp.gpu_node_pool.GpuNodePoolArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    machine_type: str
    """A GPU machine type from the catalog, e.g. 'g2-standard-8' (1 x L4) or 'a3-highgpu-8g' (8
    x H100). Required; its GPUs, zones and local SSDs come from it.
    """
    market: NotRequired[GcpGpuNodePoolMarket]
    """'spot' (default: preemptible, a fraction of the price; jobs resume from checkpoints,
    T2), 'on-demand', or 'flex-start' (Dynamic Workload Scheduler: queued until the capacity
    exists, at most 7 days a node). Default: "spot".
    """
    max_nodes: int
    """Most nodes the pool may run, across its zones: the cost cap and the GPU quota it needs
    (C1, C3). Required, no default.
    """
    workload: NotRequired[GcpGpuNodePoolWorkload]
    """What the pool runs, labelled on its nodes' VMs: 'training' (default; the budget kill
    switch may stop it, nodes live at most maxNodeHours) or 'serving' (no node lifetime by
    default: nodes created together would end together, and with them every replica of the
    model). Default: "training".
    """
    max_node_hours: NotRequired[float]
    """Hours a node may live, whatever runs on it (node `max_run_duration`, T5). Default 24 for
    training pools, none for serving pools; at most 168 for flex-start, where it is
    required. null: no node lifetime (rule AIS-T5-03 then fails a training pool), for GKE
    versions that refuse the field. Default: 24.
    """
    local_ssds: NotRequired[int]
    """Local SSDs (375 GB NVMe each) backing the node's ephemeral storage, for emptyDir dataset
    caches (D3). Default: the machine's bundled count (A2 Ultra, A3), else the smallest
    count Compute Engine allows for it.
    """
    allow_boot_disk_ephemeral_storage: NotRequired[bool]
    """Keep ephemeral storage on the boot disk (no local SSD). Off: training caches datasets on
    local NVMe (D3). Default: false.
    """
    zones: NotRequired[list[str]]
    """Zones of the cluster's region for the nodes; default: every zone the catalog says offers
    the machine type (C2). Each must offer it.
    """
    gpu_driver_version: NotRequired[GcpGpuNodePoolGpuDriverVersion]
    """GPU driver GKE installs: DEFAULT (the version's default) or LATEST. Changing it replaces
    the pool (terraform-provider-google#23248). Default: "DEFAULT".
    """
    queued_provisioning: NotRequired[bool]
    """flex-start only: nodes obtainable exclusively through ProvisioningRequests (Kueue's
    provisioning admission check), all-or-nothing. Default: false.
    """
    disk_size_gb: NotRequired[int]
    """Boot disk size (pd-balanced). Default: 200."""
    node_pool_name: NotRequired[str]
    """The pool's GKE name (40 characters at most); default: the name."""
    project: str
    """The cluster's project ID (plain: the pool's checks and names use it)."""
    cluster_region: str
    """The GcpGkeCluster's region (plain: the zones offering the machine are chosen from it
    while the pool builds).
    """
    cluster_id: pulumi.Input[str]
    """The GcpGkeCluster's clusterId: the pool joins it and waits for it."""
    node_service_account_email: pulumi.Input[str]
    """The GcpGkeCluster's nodeServiceAccountEmail: the nodes run as it."""
    node_disk_key: NotRequired[pulumi.Input[str]]
    """The GcpGkeCluster's nodeDiskKey: the nodes' boot disks are encrypted with it (without
    it, Google's default key).
    """


class GcpNotebookArgs(TypedDict):
    """The inputs of GcpNotebook: its configuration, validated into
    aistack.gcp.notebook.NotebookArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Owner, cost centre and allowed regions; required. Labels the instance and key; the
    zone's region must be among allowedRegions (C4).
    """
    machine_type: NotRequired[str]
    """Compute Engine machine type. Default e2-standard-4 (4 vCPU, 16 GB, about $0.13/hour); a
    GPU machine from the catalog (e.g. 'g2-standard-8', 1 x L4) gets its GPUs declared and
    Workbench installs the driver. Default: "e2-standard-4".
    """
    zone: NotRequired[str]
    """Zone of the instance: one of the network's notebook zones, in the dataset bucket's
    region (D2), offering the machine type (C2). Default: the first such zone.
    """
    idle_minutes: NotRequired[int]
    """Minutes without kernel or terminal activity before Workbench stops the VM (C5;
    idle-timeout-seconds). Default 60: a forgotten GPU costs an hour, not a weekend.
    Workbench accepts 10 to 1440; rule AIS-C5-08 accepts at most 240. Default: 60.
    """
    owner: NotRequired[str]
    """The one user (e-mail) who may open JupyterLab ('Single user' access mode,
    instance_owners). Default: every user who may act as the notebook's service account
    (roles/iam.serviceAccountUser on it); grant that deliberately.
    """
    allow_root: NotRequired[bool]
    """Let the Jupyter user run sudo. Off (notebook-disable-root): root could stop the agent
    that reports activity for idle shutdown, or read the VM's other credentials. Default:
    false.
    """
    allow_terminal: NotRequired[bool]
    """JupyterLab's terminal. On: a notebook cell runs shell commands as the same user anyway,
    so turning the terminal off (notebook-disable-terminal) removes convenience, not
    capability. Set false where policy asks for it. Default: true.
    """
    disable_proxy_access: NotRequired[bool]
    """Do not register with the Workbench proxy. Off (the proxy stays): the proxy is how users
    reach JupyterLab on an instance with no external IP, over HTTPS with Google sign-in and
    IAM; without it the only way in is an SSH tunnel, which needs an SSH firewall rule
    (gcp.Network allowIapSsh) and OS-level accounts. Default: false.
    """
    boot_disk_gb: NotRequired[int]
    """Boot disk (PD balanced), GB. Default: 150."""
    data_disk_gb: NotRequired[int]
    """Data disk holding /home/jupyter (PD balanced), GB: the users' work. Default: 100."""
    kms_key_name: NotRequired[str]
    """Share an existing Cloud KMS key (in the instance's region) for the disks; default: a new
    key ring and key, rotated every 90 days.
    """
    allow_google_managed_encryption: NotRequired[bool]
    """Encrypt the disks with Google-managed keys (GMEK), no key of the stack's own. Off: CMEK
    (checkov CKV2_GCP_27). Default: false.
    """
    allow_public_ip: NotRequired[bool]
    """Give the VM an external IP. Off: no address the internet can reach; users come in
    through the proxy (S1). Default: false.
    """
    extra_metadata: NotRequired[dict[str, str]]
    """More Workbench metadata (e.g. {'notebook-disable-downloads': 'true'}). Keys aistack
    sets, and keys Workbench reserves, are refused. Default: {}.
    """
    instance_name: NotRequired[str]
    """The instance id (and VM name): 1-63 lowercase letters, digits and hyphens, starting with
    a letter; default: the component name and the stack's digest, as instance ids are unique
    in their zone and the project's other stacks pick theirs.
    """
    allow_destroy_with_data: NotRequired[bool]
    """Let `pulumi destroy` delete the instance, its disks and its key. Off: retained, with
    deletion protection on and deletion_policy PREVENT (and protected in prod). Default:
    false.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """
    network_region: str
    """The GcpNetwork's region (plain: the notebook's zone is chosen from it while it builds,
    among the zones offering its machine type).
    """
    network_self_link: pulumi.Input[str]
    """The GcpNetwork's networkSelfLink: the VPC the instance is in."""
    notebook_subnet_self_link: pulumi.Input[str]
    """The GcpNetwork's subnetSelfLinks["notebook"]: the private subnet of its notebook tier."""
    service_account_email: pulumi.Input[str]
    """The account the VM runs as: the one the network's notebook tier admits
    (GcpWorkloadIdentity emails["notebook"]).
    """
    dataset_bucket_name: NotRequired[pulumi.Input[str]]
    """The team's dataset GcpDatasetBucket's bucketName: the notebook may read it."""
    dataset_region: NotRequired[str]
    """That bucket's region (plain: checked before anything is created): the notebook must be
    in it (D2). Required with datasetBucketName.
    """


class GcpTrainingPoolScheduler(enum.StrEnum):
    MIG = "mig"
    GKE = "gke"


class GcpTrainingPoolMarket(enum.StrEnum):
    SPOT = "spot"
    ON_DEMAND = "on-demand"


class GcpTrainingPoolGpuMetrics(enum.StrEnum):
    NVML = "nvml"
    DCGM = "dcgm"


class GcpTrainingPoolArgs(TypedDict):
    """The inputs of GcpTrainingPool: its configuration, validated into
    aistack.gcp.training_pool.TrainingPoolArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """The pool's region: must equal the dataset and checkpoint buckets' (D2) and be allowed
    (C4).
    """
    scheduler: NotRequired[GcpTrainingPoolScheduler]
    """'mig': VMs in a managed instance group (this component). 'gke' is gcp.GkeCluster with
    gcp.GpuNodePool and k8s.TrainingQueue, not this component. Default: "mig".
    """
    machine_type: str
    """A GPU machine type from the catalog, e.g. 'g2-standard-8' (1 x L4) or 'a3-highgpu-8g' (8
    x H100); its GPUs and bundled local SSDs come with it.
    """
    market: NotRequired[GcpTrainingPoolMarket]
    """Spot (default): a fraction of the price; runs resume (T1, T2). Default: "spot"."""
    max_nodes: int
    """Most VMs at once: the cost cap. Required."""
    image: str
    """Training image by digest (E1): repo@sha256:<64 hex>."""
    source_image: str
    """The VM's boot image, pinned by name: projects/<p>/global/images/<name> (not a family/
    reference, which changes under the pool, E1). It needs the NVIDIA driver built in (the
    VMs boot with Secure Boot and no internet path), gcloud and the Ops Agent: a Deep
    Learning VM `-nvidia-<driver>-v<date>` image (others of that project are refused) or the
    team's own (docs/real-boot.md).
    """
    max_runtime_minutes: int
    """Hard wall-clock limit per VM (T5): `max_run_duration` and the node's own clock.
    Required.
    """
    idle_minutes: NotRequired[int]
    """Idle minutes before a VM deletes itself. Default: 30."""
    idle_gpu_util_percent: NotRequired[int]
    """Idle below this GPU %. Default: 5."""
    starvation_gpu_util_percent: NotRequired[int]
    """Alert when running VMs average GPU use below this (T3). Default: 40."""
    starvation_minutes: NotRequired[int]
    """...for this long (T3). Default: 30."""
    local_ssds: NotRequired[int]
    """Local SSDs (375 GB NVMe each) for the dataset cache (D3). Default: the machine's bundled
    count (A2 Ultra, A3), else the smallest count it allows.
    """
    boot_disk_gb: NotRequired[int]
    """Boot disk (pd-balanced) size. Default: 200."""
    dataset_prefix: NotRequired[str]
    """Prefix in the dataset bucket holding one sub-prefix per version. Default: ""."""
    dataset_version: NotRequired[str]
    """Pinned dataset version; default: the dataset bucket's (D4)."""
    checkpoint_prefix: NotRequired[str]
    """Prefix for checkpoints and manifests. Default: "runs"."""
    log_retention_days: NotRequired[int]
    """Days the pool's regional log bucket keeps logs (T6), 1 to 3650. Default: 90."""
    gpu_metrics: NotRequired[GcpTrainingPoolGpuMetrics]
    """The Ops Agent's GPU metrics (see aistack.node.ops_agent_config). Default: "nvml"."""
    notification_channels: NotRequired[pulumi.Input[str]]
    """Monitoring notification channel ids the alert policies notify. Default: []."""
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """
    training_subnet_self_link: pulumi.Input[str]
    """The GcpNetwork's subnetSelfLinks["training"]: the VMs' subnet (no external IP)."""
    training_service_account_email: pulumi.Input[str]
    """The service account the network's training firewall rules name (its serviceAccounts
    training entry): the VMs run as it.
    """
    training_zones: list[str]
    """The GcpNetwork's plannedZones["training"] (plain: the group's zones)."""
    training_health_check_port: int
    """The GcpNetwork's trainingHealthCheckPort (plain): the autohealing check's port."""
    dataset_bucket_name: pulumi.Input[str]
    """The dataset GcpDatasetBucket's bucket name (kind dataset, the pool's region)."""
    checkpoints_bucket_name: pulumi.Input[str]
    """The checkpoints GcpDatasetBucket's bucket name (kind checkpoints, same region)."""


class GcpModelVersionStandby(enum.StrEnum):
    WARM = "warm"
    ZERO = "zero"


class GcpModelVersion(TypedDict):
    """One deployable model version: its traffic share, its bounds and who approved it."""

    version: str
    """The version as stored in the models bucket, under gs://<bucket>/<modelName>/<version>/
    (S7). Explicit: 'latest' and the other moving labels are refused.
    """
    weight: int
    """Share of traffic in per cent; the weights sum to 100. 0 keeps the version deployable
    without traffic (S6): rollback is a weight change.
    """
    min_nodes: NotRequired[int]
    """Default: the tier's minNodes."""
    max_nodes: NotRequired[int]
    """Cost cap of this version; default: the tier's."""
    standby: NotRequired[GcpModelVersionStandby]
    """At weight 0: 'warm' keeps one VM loaded (a rollback takes seconds); 'zero' keeps none.
    Default: "warm".
    """
    approved_by: NotRequired[str]
    """Who approved this version for production (G3). Required in prod."""


class GcpInferenceTierRuntime(enum.StrEnum):
    VLLM = "vllm"
    TRITON = "triton"
    TENSORRT_LLM = "tensorrt-llm"


class GcpInferenceTierRequestLogging(enum.StrEnum):
    NONE = "none"
    METADATA = "metadata"
    FULL = "full"


class GcpInferenceTierLogDataClassification(enum.StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


class GcpInferenceTierFallback(enum.StrEnum):
    ERROR = "error"
    PREVIOUS_VERSION = "previous_version"


class GcpInferenceTierThrottleKey(enum.StrEnum):
    IP = "IP"
    HTTP_HEADER = "HTTP_HEADER"


class GcpModelQualityAlertAlertWhen(enum.StrEnum):
    BELOW = "below"
    ABOVE = "above"


class GcpModelQualityAlert(TypedDict):
    """The model-quality metric the serving code writes, and when it alerts (G4)."""

    threshold: float
    """Alert threshold. Required."""
    metric_name: NotRequired[str]
    """Custom metric custom.googleapis.com/aistack/<metricName>, written with the labels
    model_version and tier. Default: "model_quality_score".
    """
    alert_when: NotRequired[GcpModelQualityAlertAlertWhen]
    """'below' for scores. Default: "below"."""
    period_minutes: NotRequired[int]
    """Alignment period. Default: 60."""
    duration_minutes: NotRequired[int]
    """How long beyond the threshold before it alerts. Default: 180."""
    absent_alerts: NotRequired[bool]
    """Also alert when no version publishes the metric for durationMinutes: a version whose
    quality nobody publishes is not monitored. Default: true.
    """


class GcpInferenceTierArgs(TypedDict):
    """The inputs of GcpInferenceTier: its configuration, validated into
    aistack.gcp._inference_args.InferenceTierArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """The tier's region: the network's and the models bucket's."""
    model_name: str
    """The model's prefix in the models bucket."""
    versions: list[GcpModelVersion]
    """Deployable versions (S6, S7); at most 5."""
    image: str
    """Model server image by digest (E1, S2)."""
    runtime: NotRequired[GcpInferenceTierRuntime]
    """Runtime. Default: "vllm"."""
    runtime_args: NotRequired[list[str]]
    """Extra runtime arguments. Default: []."""
    machine_type: str
    """GPU machine type from the catalog, offered in the network's inference zones (C2), e.g.
    'g2-standard-8' (1 x L4).
    """
    source_image: str
    """Boot image pinned by name, projects/<p>/global/images/<name> (E1), with the NVIDIA
    driver built in, docker with the NVIDIA container toolkit, gcloud and the Ops Agent: a
    Deep Learning VM `-nvidia-<driver>-v<date>` image (others of that project are refused)
    or the team's own (docs/real-boot.md).
    """
    max_nodes: int
    """Most VMs per version: the cost cap."""
    min_nodes: NotRequired[int]
    """VMs kept per version taking traffic. Default: 1."""
    target_requests_per_node_per_second: NotRequired[float]
    """Load balancing utilization target: requests per second a VM takes before the autoscaler
    adds one (S3). Measure your model and set it. Default: 1.0.
    """
    request_logging: GcpInferenceTierRequestLogging
    """What the gateway and the load balancer log per request (G2), required."""
    log_data_classification: NotRequired[GcpInferenceTierLogDataClassification]
    """What the logs hold; required with requestLogging 'full' (G2)."""
    log_retention_days: NotRequired[int]
    """Days the tier's regional log bucket keeps logs; required with 'full'."""
    fallback: NotRequired[GcpInferenceTierFallback]
    """What a VM answers while its model server is down (G5): a JSON 503 with Retry-After.
    'previous_version' is refused, as on AWS. Default: "error".
    """
    gateway: NotRequired[GatewayConfig]
    """nginx gateway. Default: its own defaults."""
    gateway_image: NotRequired[str]
    """nginx image by digest (e.g. mirrored to Artifact Registry). Required: private VMs cannot
    reach a package mirror to install nginx.
    """
    public: NotRequired[bool]
    """EXTERNAL_MANAGED (internet-facing) regional application load balancer. Off:
    INTERNAL_MANAGED, reachable from the VPC only. Default: false.
    """
    certificate: NotRequired[str]
    """Regional SSL certificate (projects/<p>/regions/<r>/sslCertificates/<n>) for HTTPS on
    443. Required when public or for confidential/restricted data unless allowPlaintextHttp.
    """
    allow_plaintext_http: NotRequired[bool]
    """Allow HTTP where TLS is required. Default: false."""
    throttle_key: NotRequired[GcpInferenceTierThrottleKey]
    """What Cloud Armor counts per client (S3): 'IP' or 'HTTP_HEADER' (throttleHeader, e.g. the
    API key). Default: "IP".
    """
    throttle_header: NotRequired[str]
    """Header counted with HTTP_HEADER. Default: "x-api-key"."""
    throttle_requests: NotRequired[int]
    """Requests per client per interval before 429. Default: 600."""
    throttle_interval_seconds: NotRequired[int]
    """Interval of throttleRequests. Default: 60."""
    latency_slo_ms: int
    """p99 latency objective (S5). Required."""
    error_rate_percent: NotRequired[float]
    """5xx share that alerts. Default: 1.0."""
    quality: GcpModelQualityAlert
    """The model-quality alert (G4). Required."""
    notification_channels: NotRequired[pulumi.Input[str]]
    """Monitoring channel ids. Default: []."""
    boot_disk_gb: NotRequired[int]
    """Boot disk (pd-balanced) size. Default: 200."""
    boot_timeout_minutes: NotRequired[int]
    """How long a new VM may take to load the model before autohealing judges it; at most 60
    (autohealing initial delay limit). Default: 45.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """
    network_id: pulumi.Input[str]
    """The GcpNetwork's networkId: the forwarding rule's VPC."""
    inference_subnet_self_link: pulumi.Input[str]
    """The GcpNetwork's subnetSelfLinks["inference"]: the VMs' subnet (no external IP)."""
    inference_service_account_email: pulumi.Input[str]
    """The service account the network's inference firewall rules name: the VMs run as it."""
    inference_zones: list[str]
    """The GcpNetwork's plannedZones["inference"] (plain: the groups' zones)."""
    gateway_port: int
    """The GcpNetwork's gatewayPort (plain): the port the load balancer reaches."""
    proxy_subnet_cidr: str
    """The range of the GcpNetwork's proxy-only subnet (plain): the gateway trusts
    X-Forwarded-For from it only.
    """
    models_bucket_name: pulumi.Input[str]
    """The models GcpDatasetBucket's bucket name (kind models, the tier's region)."""


class GcpAuditLogsArgs(TypedDict):
    """The inputs of GcpAuditLogs: its configuration, validated into
    aistack.gcp.audit_logs.AuditLogsArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    region: str
    """Region of the log bucket the audit logs are kept in: in governance.allowedRegions (C4),
    the datasets' region.
    """
    data_access_services: NotRequired[list[str]]
    """Services whose Data Access logs (ADMIN_READ, DATA_READ, DATA_WRITE) are turned on, with
    no exempted principals. Default: Cloud Storage, where the datasets are. 'allServices'
    covers every service (CIS GCP 2.1) and costs the most: every read of every API is a log
    entry. Default: ["storage.googleapis.com"].
    """
    retention_days: NotRequired[int]
    """Days the regional log bucket keeps the audit logs (Logging allows 1 to 3650). Default
    400, as long as the `_Required` bucket keeps Admin Activity logs. Default: 400.
    """
    project: str
    """The project ID (plain: names and checks use it): the GcpProjectServices' project."""
    enabled_services: pulumi.Input[list[str]]
    """The GcpProjectServices' enabledServices: every resource here waits for the APIs it
    enables (a fresh project refuses calls to an API that is still turning on).
    """


class K8sTeamNamespaceTier(enum.StrEnum):
    TRAIN = "train"
    SERVE = "serve"


class K8sWorkloadAccountIdentity(enum.StrEnum):
    NONE = "none"
    GKE_WORKLOAD_IDENTITY = "gke-workload-identity"
    EKS_IRSA = "eks-irsa"
    EKS_POD_IDENTITY = "eks-pod-identity"


class K8sWorkloadAccount(TypedDict):
    """One workload's ServiceAccount and the cloud identity it acts as."""

    name: str
    """The ServiceAccount name (a DNS-1123 label); pods name it in `serviceAccountName`.
    'default' is refused: Kubernetes creates and owns it.
    """
    needs_api_token: NotRequired[bool]
    """Mount the Kubernetes API token into the workload's pods
    (`automountServiceAccountToken`). Off: a training or serving container has no business
    calling the API server, and a stolen token is a foothold (C6). Default: false.
    """
    identity: NotRequired[K8sWorkloadAccountIdentity]
    """How the workload gets cloud credentials without keys: 'gke-workload-identity'
    (annotation iam.gke.io/gcp-service-account), 'eks-irsa' (annotation
    eks.amazonaws.com/role-arn), 'eks-pod-identity' (an EKS Pod Identity association on the
    AWS side, which aws.WorkloadIdentity creates; nothing on the ServiceAccount), or 'none'.
    Default: "none".
    """
    gcp_service_account: NotRequired[str]
    """gke-workload-identity: the Google service account's e-mail (or pass it as an Output in
    the component's `identities=`).
    """
    aws_role_arn: NotRequired[str]
    """eks-irsa / eks-pod-identity: the IAM role's ARN (or pass it as an Output in the
    component's `identities=`).
    """


class K8sEgressAllow(TypedDict):
    """Egress the namespace's pods may open beyond DNS, the namespace and the identity
    endpoint: object storage, a registry, STS for IRSA, an experiment tracker.
    """

    cidr: str
    """Destination range, e.g. '199.36.153.8/30' (Google APIs via Private Google Access) or a
    VPC endpoint subnet.
    """
    ports: NotRequired[list[int]]
    """TCP ports. Default 443. Default: [443]."""
    except_cidrs: NotRequired[list[str]]
    """Ranges inside `cidr` still denied. Default: []."""
    purpose: str
    """Why: recorded in the policy's annotation."""


class K8sTeamNamespaceArgs(TypedDict):
    """The inputs of K8sTeamNamespace: its configuration, validated into
    aistack.k8s.team_namespace.TeamNamespaceArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    team: str
    """The team, as the `aistack.dev/team` label: queues and policies select namespaces on it."""
    namespace: NotRequired[str]
    """The namespace's name (DNS-1123 label). Default: the component's name. Always explicit,
    never auto-named: queues and pods refer to it by name.
    """
    tier: NotRequired[K8sTeamNamespaceTier]
    """What runs here: training or serving. Serving and training belong in separate namespaces
    (S1). Default: "train".
    """
    gpus: int
    """Hard cap on GPUs requested by all pods together (`requests.nvidia.com/gpu`). Required:
    the cost cap is a decision (C3). 0 for a namespace that runs no GPU work.
    """
    gpu_resource: NotRequired[str]
    """The device plugin's extended resource: nvidia.com/gpu (default), amd.com/gpu, ...
    Quota'd as `requests.<resource>`: extended resources take the requests. prefix only.
    Default: "nvidia.com/gpu".
    """
    cpu: NotRequired[str]
    """Hard cap on CPU requested (`requests.cpu`). Default: "64"."""
    memory: NotRequired[str]
    """Hard cap on memory requested (`requests.memory`). Default: "256Gi"."""
    max_pods: NotRequired[int]
    """Hard cap on pods in the namespace. Default: 100."""
    max_load_balancers: NotRequired[int]
    """Services of type LoadBalancer allowed (`services.loadbalancers`). Default 0: each one is
    a billed cloud load balancer, and a public one an exposure; serving goes through the
    team's gateway. Default: 0.
    """
    max_node_ports: NotRequired[int]
    """NodePort services allowed (`services.nodeports`). Default 0. Default: 0."""
    default_cpu_request: NotRequired[str]
    """CPU request given to containers that set none (LimitRange). Default: "250m"."""
    default_memory_request: NotRequired[str]
    """Memory request given to containers that set none. Default: "512Mi"."""
    default_memory_limit: NotRequired[str]
    """Memory limit given to containers that set none: memory cannot be throttled, so a
    container without a limit can take the node's. Default: "2Gi".
    """
    pod_security_version: NotRequired[str]
    """The Pod Security Standards version the namespace pins (`enforce-version`). Pinned, never
    'latest': a cluster upgrade must not change which pods are admitted. Default: the oldest
    Kubernetes version aistack supports. Default: "v1.30".
    """
    service_accounts: NotRequired[list[K8sWorkloadAccount]]
    """One per workload (trainer, server, notebook...). Default: []."""
    allow_egress: NotRequired[list[K8sEgressAllow]]
    """Egress beyond DNS, the namespace and the identity endpoint. Default none: list object
    storage, registry and STS ranges explicitly. Default: [].
    """
    allow_destroy: NotRequired[bool]
    """Let `pulumi destroy` delete the namespace, and so everything in it (jobs, volumes,
    checkpoints on PVCs). Off: it is retained, and protected in prod. Default: false.
    """
    identities: NotRequired[dict[str, pulumi.Input[str]]]
    """A workload's cloud identity by ServiceAccount name, each value an Output: the Google
    service account e-mail (GcpWorkloadIdentity emails[...]) for gke-workload-identity, the
    IAM role ARN (AwsWorkloadIdentity roleArns[...]) for eks-irsa and eks-pod-identity. The
    names are plain: they are checked against serviceAccounts.
    """


class K8sGpuMonitoringPlatform(enum.StrEnum):
    PROMETHEUS_OPERATOR = "prometheus-operator"
    GKE_MANAGED_PROMETHEUS = "gke-managed-prometheus"


class K8sGpuMonitoringExporter(enum.StrEnum):
    GPU_OPERATOR = "gpu-operator"
    DCGM_EXPORTER_CHART = "dcgm-exporter-chart"
    GKE_MANAGED_DCGM = "gke-managed-dcgm"


class K8sGpuMonitoringScrapeKind(enum.StrEnum):
    SERVICE_MONITOR = "ServiceMonitor"
    POD_MONITOR = "PodMonitor"


class K8sIdleGpuAlertSeverity(enum.StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class K8sIdleGpuAlert(TypedDict):
    """`AistackGpuIdle` (C5): GPUs held by a pod that did nothing for a whole window."""

    enabled: NotRequired[bool]
    """bool(x) -> bool Default: true."""
    threshold_percent: NotRequired[float]
    """A GPU whose highest DCGM_FI_DEV_GPU_UTIL over the window stays below this is idle.
    Default 1 %: not one busy sample in the window. Default: 1.0.
    """
    window: NotRequired[str]
    """The window (range selector). Default 30m. Default: "30m"."""
    for_duration: NotRequired[str]
    """How long the condition holds before the alert fires. Default 5m. Default: "5m"."""
    severity: NotRequired[K8sIdleGpuAlertSeverity]
    """Default: "warning"."""


class K8sStarvationAlertSeverity(enum.StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class K8sStarvationAlert(TypedDict):
    """`AistackGpuStarved` (T3): a running workload's GPUs are busy only part of the time,
    usually waiting on input (data loading, preprocessing, a remote bucket).
    """

    enabled: NotRequired[bool]
    """bool(x) -> bool Default: true."""
    threshold_percent: NotRequired[float]
    """A pod whose GPUs average below this utilisation over the window is starved. Default 40
    %. Default: 40.0.
    """
    window: NotRequired[str]
    """The averaging window. Default 30m. Default: "30m"."""
    for_duration: NotRequired[str]
    """How long before the alert fires. Default 10m. Default: "10m"."""
    severity: NotRequired[K8sStarvationAlertSeverity]
    """Default: "warning"."""


class K8sQueueWaitAlertSeverity(enum.StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class K8sQueueWaitAlert(TypedDict):
    """`AistackQueueWaitHigh` and `AistackQueueStalled`: work waits in Kueue (its metrics:
    kueue_admission_wait_time_seconds, kueue_pending_workloads,
    kueue_admitted_workloads_total, pkg/metrics/metrics.go and
    site/content/en/docs/reference/metrics.md at v0.19.2).
    """

    enabled: NotRequired[bool]
    """bool(x) -> bool Default: true."""
    max_wait_seconds: NotRequired[int]
    """AistackQueueWaitHigh fires when the quantile of admission wait over the window is above
    this. Default 3600 (an hour). Default: 3600.
    """
    quantile: NotRequired[float]
    """The wait quantile. Default 0.9. Default: 0.9."""
    window: NotRequired[str]
    """The rate window. Default 1h. Default: "1h"."""
    stalled_for: NotRequired[str]
    """AistackQueueStalled fires when a ClusterQueue has pending workloads and admitted none
    for this long. Default 30m. Default: "30m".
    """
    cluster_queues: NotRequired[list[str]]
    """The ClusterQueues watched (k8s.TrainingQueue names its own). Default: all. Default: []."""
    severity: NotRequired[K8sQueueWaitAlertSeverity]
    """Default: "warning"."""


class K8sGpuMonitoringArgs(TypedDict):
    """The inputs of K8sGpuMonitoring: its configuration, validated into
    aistack.k8s.gpu_monitoring.GpuMonitoringArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    platform: K8sGpuMonitoringPlatform
    """The monitoring stack: 'prometheus-operator' (ServiceMonitor/PodMonitor, PrometheusRule)
    or 'gke-managed-prometheus' (PodMonitoring, ClusterRules).
    """
    exporter: NotRequired[K8sGpuMonitoringExporter]
    """Who installed the DCGM exporter: 'gpu-operator' (NVIDIA GPU Operator),
    'dcgm-exporter-chart' (NVIDIA's Helm chart) or 'gke-managed-dcgm' (GKE's managed DCGM
    metrics package, which GKE scrapes itself: no scrape object is created). Default:
    "gpu-operator".
    """
    exporter_namespace: NotRequired[str]
    """The exporter's namespace. Default: gpu-operator (GPU Operator) or dcgm-exporter (the
    chart's release namespace).
    """
    exporter_labels: NotRequired[dict[str, str]]
    """Labels selecting the exporter's Service (ServiceMonitor) or pods (PodMonitor,
    PodMonitoring). Default: the installer's (see docs).
    """
    exporter_port: NotRequired[str]
    """The port's name: the Service port for a ServiceMonitor, the container port otherwise.
    Default: the installer's (gpu-metrics / metrics).
    """
    scrape: NotRequired[bool]
    """Create the scrape object. False when the installer's own ServiceMonitor already scrapes
    the exporter (GPU Operator dcgmExporter.serviceMonitor.enabled, the chart's
    serviceMonitor.enabled): two scrapes double every series and every alert. Default: true.
    """
    scrape_kind: NotRequired[K8sGpuMonitoringScrapeKind]
    """prometheus-operator only: scrape through the exporter's Service (ServiceMonitor,
    default) or its pods (PodMonitor). Default: "ServiceMonitor".
    """
    scrape_interval: NotRequired[str]
    """Scrape interval. Default 15s, the GPU Operator's and the chart's. Default: "15s"."""
    scrape_timeout: NotRequired[str]
    """Default 10s. Default: "10s"."""
    rules_namespace: NotRequired[str]
    """prometheus-operator: the PrometheusRule's namespace (one the Prometheus'
    ruleNamespaceSelector selects). Default: the exporter's namespace. GMP's ClusterRules
    are cluster-scoped.
    """
    selector_labels: NotRequired[dict[str, str]]
    """Labels the Prometheus selects monitors and rules by (serviceMonitorSelector,
    ruleSelector; kube-prometheus-stack: {'release': '<release name>'}). Added to every
    object. Default: {}.
    """
    namespaces: NotRequired[list[str]]
    """The workload namespaces the GPU alerts watch (TeamNamespace names). Default: every
    namespace. Default: [].
    """
    idle: NotRequired[K8sIdleGpuAlert]
    """`AistackGpuIdle` (C5): GPUs held by a pod that did nothing for a whole window. Default:
    its own defaults.
    """
    starvation: NotRequired[K8sStarvationAlert]
    """`AistackGpuStarved` (T3): a running workload's GPUs are busy only part of the time,
    usually waiting on input (data loading, preprocessing, a remote bucket). Default: its
    own defaults.
    """
    queue_wait: NotRequired[K8sQueueWaitAlert]
    """`AistackQueueWaitHigh` and `AistackQueueStalled`: work waits in Kueue (its metrics:
    kueue_admission_wait_time_seconds, kueue_pending_workloads,
    kueue_admitted_workloads_total,     pkg/metrics/metrics.go and
    site/content/en/docs/reference/metrics.md at v0.19.2). Default: its own defaults.
    """
    alert_labels: NotRequired[dict[str, str]]
    """Extra labels on every alert, for Alertmanager routing (e.g. {'team': 'ml'}). Keys are
    Prometheus label names. Default: {}.
    """
    runbook_url: NotRequired[str]
    """A link set as every alert's runbook_url annotation."""


class K8sTrainingJobTemplateCheckpointSignal(enum.StrEnum):
    TERM = "TERM"
    USR1 = "USR1"
    USR2 = "USR2"


class K8sTrainingJobTemplateArgs(TypedDict):
    """The inputs of K8sTrainingJobTemplate: its configuration, validated into
    aistack.k8s.training_job_template.TrainingJobTemplateArgs as a Python caller's is, and
    its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    queue: str
    """The team's Kueue LocalQueue (k8s.TrainingQueue's `local_queue_names`): the
    `kueue.x-k8s.io/queue-name` label. Required: aistack always queues.
    """
    service_account: str
    """The trainer's ServiceAccount in the namespace (one of k8s.TeamNamespace's
    `serviceAccounts`), which carries its cloud identity.
    """
    namespace: NotRequired[str]
    """The team namespace. Default: the `team=` TeamNamespace's."""
    run_name: NotRequired[str]
    """Prefix of each run's object name (`metadata.generateName`, at most 30 characters,
    starting with a letter). Default: the component's name.
    """
    image: str
    """Training image by digest (E1): repo@sha256:<64 hex>."""
    command: NotRequired[list[str]]
    """The trainer's command; it runs as PID 1, which the preStop hook signals. Default:
    ["python", "-m", "train"].
    """
    args: NotRequired[list[str]]
    """Arguments after the command. Default: []."""
    nodes: NotRequired[int]
    """Nodes (pods) per run. 1 renders a batch/v1 Job; more renders a JobSet with one leader
    and nodes-1 workers, reachable by name through the headless Service JobSet creates.
    Default: 1.
    """
    gpus_per_node: int
    """GPUs per pod (requests = limits)."""
    gpu_resource: NotRequired[str]
    """The device plugin's extended resource. Default: "nvidia.com/gpu"."""
    cpu: NotRequired[str]
    """CPU per pod (requests = limits). Default: "8"."""
    memory: NotRequired[str]
    """Memory per pod (requests = limits). /dev/shm is memory-backed and counts against it.
    Default: "64Gi".
    """
    max_runtime_minutes: int
    """Hard wall-clock limit of a run (T5): the Job's activeDeadlineSeconds and Kueue's max
    execution time. Required: a run without a limit bills until someone notices.
    """
    max_retries: NotRequired[int]
    """Failures retried that are not disruptions (T2): the Job's backoffLimit, or the JobSet's
    maxRestarts. Preemptions and evictions are not counted. Default: 3.
    """
    checkpoint_uri: str
    """Where runs write checkpoints (gs://, s3://...): each run under <uri>/<run id>, which
    AISTACK_RUN_CHECKPOINT_URI names (T1, E5).
    """
    dataset_uri: str
    """The dataset's location, unversioned."""
    dataset_version: str
    """The dataset version every run of this template reads (D4): appended to the dataset URI
    and the cache path, and labelled on the run.
    """
    dataset_cache_gib: NotRequired[int]
    """Node-local dataset and checkpoint cache (emptyDir sizeLimit, D3). Put the pool's NVMe
    under the kubelet (GKE local SSD ephemeral storage, Karpenter instanceStorePolicy RAID0)
    and keep this below what a node has. Default: 200.
    """
    tmp_gib: NotRequired[int]
    """/tmp (emptyDir sizeLimit). Default: 10."""
    home_gib: NotRequired[int]
    """The writable home for ~/.cache and friends (emptyDir sizeLimit). Default: 20."""
    shared_memory_gib: NotRequired[int]
    """/dev/shm for NCCL and data loader workers (emptyDir medium Memory). Default: 16."""
    termination_grace_seconds: NotRequired[int]
    """terminationGracePeriodSeconds. Default 15: what GKE Spot gives non-system pods; more has
    no effect there. AWS Spot gives 2 minutes from the notice, less what Karpenter's drain
    takes. Default: 15.
    """
    checkpoint_signal: NotRequired[K8sTrainingJobTemplateCheckpointSignal]
    """The signal the preStop hook sends PID 1 when the pod is stopped (preemption, Spot
    reclaim, drain): the trainer writes a checkpoint and exits. The hook then holds the
    kubelet's SIGTERM off until the grace period ends, so the trainer is signalled once.
    Named to the trainer in AISTACK_CHECKPOINT_SIGNAL. Default: "TERM".
    """
    run_as_user: NotRequired[int]
    """UID (and GID) the trainer runs as: non-root, above the range images give system users.
    Default: 10001.
    """
    api_token: NotRequired[bool]
    """Mount the ServiceAccount's Kubernetes API token into the pods. Off: a trainer does not
    call the API server (C6). Default: false.
    """
    priority_class: NotRequired[str]
    """A Kueue WorkloadPriorityClass (`kueue.x-k8s.io/priority-class`)."""
    priority_class_name: NotRequired[str]
    """The pods' PriorityClass, below serving's (S1): on shared nodes the scheduler evicts
    training first. k8s.TrainingQueue makes `<clusterQueue>-training`
    (`queue.priority_class_names['training']`, preemptionPolicy Never). Rule AIS-S1-13 fails
    templates without one.
    """
    environment: NotRequired[dict[str, str]]
    """Extra environment (no secrets: the cloud identity gives credentials). AISTACK_* names
    are the template's own. Default: {}.
    """
    tracker_uri: NotRequired[str]
    """Experiment tracker, as AISTACK_TRACKER_URI."""
    keep_finished_hours: NotRequired[int]
    """Finished runs (and their pods' logs) are deleted after this (ttlSecondsAfterFinished).
    Default: 72.
    """
    config_file: NotRequired[str]
    """The run configuration the submit command hashes into AISTACK_CONFIG_HASH. Default:
    "config.yaml".
    """


class K8sTrainingQueueApiVersion(enum.StrEnum):
    V1BETA2 = "v1beta2"
    V1BETA1 = "v1beta1"


class K8sQueueFlavorCapacity(enum.StrEnum):
    SPOT = "spot"
    ON_DEMAND = "on-demand"


class K8sFlavorTolerationOperator(enum.StrEnum):
    EQUAL = "Equal"
    EXISTS = "Exists"


class K8sFlavorTolerationEffect(enum.StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


class K8sFlavorToleration(TypedDict):
    """A toleration Kueue adds to the pods it admits to a flavor. The ResourceFlavor CRD
    (v0.19.2, spec.tolerations x-kubernetes-validations) allows operators Equal and Exists
    only, and no value with Exists.
    """

    key: str
    """The taint key, e.g. nvidia.com/gpu."""
    operator: NotRequired[K8sFlavorTolerationOperator]
    """Equal or Exists. Default: "Equal"."""
    value: NotRequired[str]
    """The taint value (Equal only)."""
    effect: NotRequired[K8sFlavorTolerationEffect]
    """The taint effect; none matches every effect."""


class K8sQueueFlavor(TypedDict):
    """One capacity type of the GPU pools: what a pool's `kueue_flavors()` returns, or a
    hand-written flavor for a cluster whose pools aistack does not manage.
    """

    name: str
    """The ResourceFlavor's name (cluster-scoped, explicit), e.g. 'gpu-spot'."""
    capacity: K8sQueueFlavorCapacity
    """Spot or on-demand: Spot flavors are tried first."""
    node_labels: dict[str, str]
    """Labels of the pool's nodes; Kueue adds them to the nodeSelector of the pods it admits to
    this flavor (at most 8: the CRD's maxProperties).
    """
    tolerations: NotRequired[list[K8sFlavorToleration]]
    """Tolerations for the pool's taints; Kueue adds them to admitted pods. Default: []."""
    gpus: int
    """The pool's maximum GPUs of this capacity: the flavor's GPU nominal quota."""
    gpu_resource: NotRequired[str]
    """The device plugin's resource name. Default: "nvidia.com/gpu"."""
    cpu: NotRequired[str]
    """CPU quota of this flavor. Default: gpus x the queue's cpuPerGpu."""
    memory: NotRequired[str]
    """Memory quota of this flavor. Default: gpus x the queue's memoryPerGpu."""
    ephemeral_storage: NotRequired[str]
    """Node-local disk quota of this flavor (the pools' NVMe or local SSD under the kubelet,
    summed over its nodes): job templates request their cache, /tmp and home as
    ephemeral-storage. Default: gpus x the queue's ephemeralStoragePerGpu.
    """


class K8sTrainingQueueQueueingStrategy(enum.StrEnum):
    BEST_EFFORT_FIFO = "BestEffortFIFO"
    STRICT_FIFO = "StrictFIFO"


class K8sTrainingQueuePreemption(enum.StrEnum):
    LOWER_PRIORITY = "LowerPriority"
    LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"
    NEVER = "Never"


class K8sTrainingQueueStopPolicy(enum.StrEnum):
    HOLD = "Hold"
    HOLD_AND_DRAIN = "HoldAndDrain"


class K8sTrainingQueueArgs(TypedDict):
    """The inputs of K8sTrainingQueue: its configuration, validated into
    aistack.k8s.training_queue.TrainingQueueArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    api_version: NotRequired[K8sTrainingQueueApiVersion]
    """The Kueue API version to render: v1beta2 (Kueue >= 0.15; the storage version from 0.16)
    or v1beta1 for older Kueue. Default: "v1beta2".
    """
    cluster_queue_name: NotRequired[str]
    """The ClusterQueue's name (cluster-scoped, explicit). Default: the component's name."""
    local_queue_name: NotRequired[str]
    """The LocalQueue's name in every team namespace, which jobs put in the
    kueue.x-k8s.io/queue-name label. Default: the ClusterQueue's name.
    """
    namespaces: list[str]
    """The team namespaces that may submit to the queue (names, or k8s.TeamNamespace
    components): each gets a LocalQueue, and the ClusterQueue's namespaceSelector admits
    these and no other.
    """
    flavors: list[K8sQueueFlavor]
    """The pools' capacity types (`pool.kueue_flavors()`, or hand-written)."""
    cpu_per_gpu: NotRequired[str]
    """CPU quota per GPU for flavors that give no `cpu` of their own. Default: "8"."""
    memory_per_gpu: NotRequired[str]
    """Memory quota per GPU for flavors that give no `memory`. Default: "64Gi"."""
    ephemeral_storage_per_gpu: NotRequired[str]
    """Node-local disk quota per GPU for flavors that give none (one GCE local SSD, 375 GB, per
    GPU). Pools' kueue_flavors() give their nodes' own disk. Default: "375G".
    """
    queueing_strategy: NotRequired[K8sTrainingQueueQueueingStrategy]
    """BestEffortFIFO (default): a job that does not fit does not block smaller ones behind it.
    StrictFIFO: creation order, strictly. Default: "BestEffortFIFO".
    """
    preemption: NotRequired[K8sTrainingQueuePreemption]
    """`preemption.withinClusterQueue`: a pending job may evict running jobs of lower priority
    in this queue (which Kueue requeues). Default: "LowerPriority".
    """
    cohort: NotRequired[str]
    """A cohort to lend unused quota to and reclaim it from (rendered cohortName on v1beta2,
    cohort on v1beta1). Default: none, so the queue never admits more than its own nominal
    quota.
    """
    stop_policy: NotRequired[K8sTrainingQueueStopPolicy]
    """Stop the queue from the stack: Hold (no new admissions) or HoldAndDrain (also evict
    running jobs). Default: not rendered, so the kill switch's patch (stop_command) is not
    undone by the next deploy.
    """
    workload_priorities: NotRequired[dict[str, int]]
    """WorkloadPriorityClasses for training jobs, named `<clusterQueue>-<key>`; jobs pick one
    with the kueue.x-k8s.io/priority-class label. Higher preempts lower within the queue.
    Default: {"high": 1000, "low": 100}.
    """
    serving_priority: NotRequired[int]
    """Value of the `<clusterQueue>-serving` PriorityClass, above training: on shared nodes the
    scheduler evicts training pods before serving pods (S1). At most 1000000000
    (user-defined PriorityClass limit; higher is reserved). Default: 100000.
    """
    training_priority: NotRequired[int]
    """Value of the `<clusterQueue>-training` PriorityClass (preemptionPolicy Never: training
    pods wait, Kueue decides preemption). Default: 1000.
    """


class K8sServingVersionStandby(enum.StrEnum):
    WARM = "warm"
    ZERO = "zero"


class K8sServingVersion(TypedDict):
    """One deployable model version: its traffic share, its bounds and who approved it."""

    version: str
    """The immutable version (S7), as stored under the model source,
    <uri>/<modelName>/<version>/. 'latest', 'current', 'stable' are refused.
    """
    weight: int
    """Share of traffic in per cent; all versions' weights sum to 100. 0 keeps the version
    deployed without traffic: rollback is a weight change (S6).
    """
    min_replicas: NotRequired[int]
    """Replicas kept while it takes traffic; default: the service's."""
    max_replicas: NotRequired[int]
    """Most replicas of this version (its cost cap); default: the service's."""
    standby: NotRequired[K8sServingVersionStandby]
    """At weight 0: 'warm' (default) keeps one replica loaded, so a rollback takes seconds;
    'zero' keeps none (KEDA scales it from zero when traffic returns; with the HPA, a
    rollback to it waits for `pulumi up` and a model load). Default: "warm".
    """
    approved_by: NotRequired[str]
    """Who approved this version for production (G3), e.g. an e-mail or a ticket. Required for
    every version when governance.environment is prod.
    """


class K8sInferenceServiceRuntime(enum.StrEnum):
    VLLM = "vllm"
    TRITON = "triton"
    TENSORRT_LLM = "tensorrt-llm"


class K8sModelSource(TypedDict):
    """Where each version's weights are copied from onto the node, before the runtime starts."""

    uri: str
    """s3://bucket/prefix or gs://bucket/prefix; version v of model m is read from
    <uri>/<m>/<v>/, read-only, by the serving ServiceAccount's cloud identity (no keys: the
    team namespace links it, C6).
    """
    sync_image: str
    """Image by digest with the cloud's CLI that copies the model: the AWS CLI for s3:// (e.g.
    public.ecr.aws/aws-cli/aws-cli@sha256:...), the Google Cloud CLI for gs:// (e.g.
    gcr.io/google.com/cloudsdktool/google-cloud-cli@sha256:...).
    """
    cache_size: NotRequired[str]
    """Node-local disk for the model (an emptyDir with this sizeLimit, and an ephemeral-storage
    request of the same, so the pod lands on a node that has it). Default: "200Gi".
    """


class K8sAutoscalingKind(enum.StrEnum):
    KEDA = "keda"
    HPA = "hpa"


class K8sAutoscaling(TypedDict):
    """How each version's replicas follow load, between its minimum and its maximum (S3)."""

    kind: NotRequired[K8sAutoscalingKind]
    """'keda' (default): a KEDA ScaledObject on the runtime's queue length read from Prometheus
    (needs KEDA and prometheusUrl). 'hpa': an autoscaling/v2 HorizontalPodAutoscaler on a
    Pods metric served by a metrics adapter (prometheus-adapter, or GKE's
    custom-metrics-stackdriver-adapter). Default: "keda".
    """
    prometheus_url: NotRequired[str]
    """Prometheus query endpoint KEDA reads, e.g.
    http://prometheus-operated.monitoring.svc:9090 (for GKE Managed Prometheus, the frontend
    UI service). Required with kind 'keda'.
    """
    target_queue_per_replica: NotRequired[int]
    """Requests waiting in the runtime's queue per replica before another replica is added.
    Measure your model and set it. Default: 4.
    """
    hpa_metric: NotRequired[str]
    """kind 'hpa': the metric's name as the adapter serves it, e.g. 'vllm:num_requests_waiting'
    (prometheus-adapter) or 'prometheus.googleapis.com|vllm:num_requests_waiting|gauge'
    (GKE).
    """
    scale_down_window_seconds: NotRequired[int]
    """How long load must stay low before replicas are removed. At least 300: a replica takes
    minutes to pull its image and load the model, and a shorter window removes what the next
    burst needs again. Default: 600.
    """
    polling_interval_seconds: NotRequired[int]
    """kind 'keda': how often KEDA queries Prometheus. Default: 30."""


class K8sInferenceServiceRequestLogging(enum.StrEnum):
    NONE = "none"
    METADATA = "metadata"
    FULL = "full"


class K8sInferenceServiceLogDataClassification(enum.StrEnum):
    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


class K8sInferenceServiceFallback(enum.StrEnum):
    ERROR = "error"
    PREVIOUS_VERSION = "previous_version"


class K8sParentGateway(TypedDict):
    """The Gateway API Gateway the HTTPRoute attaches to (owned by the platform team)."""

    name: str
    """str(object='') -> str str(bytes_or_buffer[, encoding[, errors]]) -> str"""
    namespace: str
    """str(object='') -> str str(bytes_or_buffer[, encoding[, errors]]) -> str"""
    section_name: NotRequired[str]
    """The listener, e.g. 'https'; default: all."""
    gateway_class: NotRequired[str]
    """The Gateway's gatewayClassName, when known. A GKE class (gke-l7-*) gets a
    HealthCheckPolicy per version Service: GKE's load balancer does not read the pods'
    readiness probe and would probe GET / on the serving port, which the model answers 404,
    so every endpoint would be unhealthy.
    """


class K8sIngressSource(TypedDict):
    """Who may reach the gateway port of the serving pods (S1): one NetworkPolicy peer."""

    cidr: NotRequired[str]
    """An address range, e.g. a GKE proxy-only subnet or a load balancer's health-check ranges."""
    namespace: NotRequired[str]
    """A namespace whose pods may connect, e.g. the Gateway implementation's."""
    pod_labels: NotRequired[dict[str, str]]
    """With namespace: only its pods with these labels. Default: {}."""
    purpose: str
    """Why: recorded in the policy's annotation."""


class K8sInferenceServiceMonitoring(enum.StrEnum):
    PROMETHEUS_OPERATOR = "prometheus-operator"
    GKE_MANAGED_PROMETHEUS = "gke-managed-prometheus"


class K8sQualityAlertAlarmWhen(enum.StrEnum):
    BELOW = "below"
    ABOVE = "above"


class K8sQualityAlert(TypedDict):
    """The model-quality metric the team's evaluator publishes to Prometheus (G4)."""

    threshold: float
    """Alert threshold. Required: only the team knows what a bad score is."""
    metric: NotRequired[str]
    """Gauge with the labels model and model_version, published by the team's evaluation job.
    Default: "aistack_model_quality_score".
    """
    alarm_when: NotRequired[K8sQualityAlertAlarmWhen]
    """'below' for scores, 'above' for drift or error measures. Default: "below"."""
    for_minutes: NotRequired[int]
    """How long it must be beyond the threshold. Default: 180."""


class K8sInferenceServiceArgs(TypedDict):
    """The inputs of K8sInferenceService: its configuration, validated into
    aistack.k8s._inference_args.InferenceServiceArgs as a Python caller's is, and its
    wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    model_name: str
    """The model's name: its prefix under the model source, the name the runtime serves it
    under, and the start of every object's name (a DNS label of at most 40 characters, so
    '<model>-<version>' fits Kubernetes names).
    """
    versions: list[K8sServingVersion]
    """Every deployable version, oldest first, with its traffic weight (S6, S7); at most 5,
    weights summing to 100. With fallback 'previous_version', each version falls back to the
    one listed before it.
    """
    image: str
    """Model server image by digest (E1, S2)."""
    runtime: NotRequired[K8sInferenceServiceRuntime]
    """The optimised runtime in the image (S2): how it is started, its health path and the
    metrics the alerts use. 'tensorrt-llm' is served through Triton's TensorRT-LLM backend
    on Kubernetes: use 'triton' with that image. Default: "vllm".
    """
    runtime_args: NotRequired[list[str]]
    """Extra runtime arguments, after the ones aistack sets. Default: []."""
    namespace: NotRequired[str]
    """The serving namespace; default: the `team=` TeamNamespace's. Required without team=
    (from other languages: a K8sTeamNamespace's namespaceName).
    """
    service_account: NotRequired[str]
    """The serve TeamNamespace's ServiceAccount the pods run as. Default: "server"."""
    priority_class_name: NotRequired[str]
    """The pods' PriorityClass, above training's (S1): the scheduler places serving first and
    evicts training for it on shared nodes. k8s.TrainingQueue makes `<clusterQueue>-serving`
    (`queue.priority_class_names['serving']`). Rule AIS-S1-13 fails serving pods without
    one.
    """
    gpus_per_replica: NotRequired[int]
    """GPUs per replica (the runtime's tensor parallelism). Default: 1."""
    gpu_resource: NotRequired[str]
    """The device plugin's resource name. Default: "nvidia.com/gpu"."""
    cpu: NotRequired[str]
    """CPU requested per replica (model server). Default: "8"."""
    memory: NotRequired[str]
    """Memory requested and limited per replica. Default: "64Gi"."""
    shared_memory: NotRequired[str]
    """/dev/shm in memory: NCCL between tensor-parallel workers. Default: "16Gi"."""
    node_labels: NotRequired[dict[str, str]]
    """nodeSelector of the GPU serving nodes, e.g. the node pool's labels. Default: {}."""
    tolerations: NotRequired[list[dict[str, Any]]]
    """Tolerations for the GPU nodes' taints, in the Kubernetes shape ({key, operator, value,
    effect}). Default: [].
    """
    model: NotRequired[K8sModelSource]
    """Where the weights are copied from; None: the image holds them at modelPath."""
    model_path: NotRequired[str]
    """Path of the weights inside the runtime container; default /models/<modelName> (where the
    copy goes).
    """
    min_replicas: NotRequired[int]
    """Replicas per version taking traffic. Default: 1."""
    max_replicas: int
    """Most replicas per version: the cost cap (S3). Required, no default."""
    autoscaling: NotRequired[K8sAutoscaling]
    """How each version's replicas follow load, between its minimum and its maximum (S3).
    Default: its own defaults.
    """
    startup_minutes: NotRequired[int]
    """How long a new replica may take to copy the model, pull the images and answer its health
    check before Kubernetes restarts it; `pulumi up` waits this long plus 10 minutes for a
    Deployment to be ready. Default: 30.
    """
    request_logging: K8sInferenceServiceRequestLogging
    """What the gateway logs per request (G2), required: 'none'; 'metadata' (time, client,
    path, status, latencies, cache status: no bodies, no keys); 'full' (metadata plus the
    request body, i.e. prompts; needs logDataClassification and logRetentionDays). Logs go
    to the container's stdout, which the cluster's log agent ships. Answers are never
    logged.
    """
    log_data_classification: NotRequired[K8sInferenceServiceLogDataClassification]
    """Highest classification of what the logs hold; required with 'full'."""
    log_retention_days: NotRequired[int]
    """Days the cluster's log store keeps these logs; required with 'full'. Recorded on the
    objects for the log pipeline and auditors: Kubernetes itself does not keep container
    logs past the pod.
    """
    fallback: NotRequired[K8sInferenceServiceFallback]
    """What the gateway answers while its model server is down (G5): 'error' (default) a JSON
    503 with Retry-After; 'previous_version' sends the request to the previous version's
    Service (the version listed before it). Default: "error".
    """
    gateway: NotRequired[GatewayConfig]
    """The nginx gateway sidecar (rate limit, concurrency cap, cache); the service sets its
    upstream, paths, logging and fallback. Default: its own defaults.
    """
    gateway_image: str
    """nginx image by digest that runs as non-root, e.g. nginxinc/nginx-unprivileged@sha256:...
    (mirrored to your registry).
    """
    trusted_proxy_cidrs: NotRequired[list[str]]
    """Ranges of the proxies in front (the Gateway implementation) whose X-Forwarded-For names
    the client; without them a client without an API key is rate limited as the proxy's
    address. Default: [].
    """
    parent_gateway: K8sParentGateway
    """The Gateway the HTTPRoute attaches to; its listener must allow routes from the serving
    namespace (allowedRoutes).
    """
    hostnames: NotRequired[list[str]]
    """Hostnames the route answers for. Default: []."""
    ingress_from: list[K8sIngressSource]
    """Who reaches the gateway port (S1): the Gateway implementation's pods or ranges.
    Required: the serve namespace denies all ingress by default.
    """
    monitoring: NotRequired[K8sInferenceServiceMonitoring]
    """The monitoring stack: PodMonitor + PrometheusRule, or GKE Managed Prometheus
    PodMonitoring + Rules. Default: "prometheus-operator".
    """
    monitoring_labels: NotRequired[dict[str, str]]
    """Labels on the scrape and the rules that the Prometheus selects them by, e.g. {release:
    kube-prometheus-stack} (that chart's default selectors). Default: {}.
    """
    monitoring_namespace: NotRequired[str]
    """Namespace of the scrapers, allowed to reach the metrics port; default: 'monitoring'
    (Prometheus Operator) or 'gmp-system' (GKE).
    """
    latency_slo_ms: int
    """p99 latency objective; the latency alert fires above it (S5). Required."""
    error_rate_percent: NotRequired[float]
    """5xx share of requests that alerts (S5). Default 1%. Default: 1.0."""
    replica_hourly_cost_usd: float
    """What one replica's GPUs and node share cost per hour (see `aistack cost`): the cost per
    1k requests recording rule divides by it (S5). Required.
    """
    quality: K8sQualityAlert
    """The model-quality alert (G4), required."""
    alert_labels: NotRequired[dict[str, str]]
    """Extra labels on every alert, for routing. Default: {}."""


class K8sImagePolicyMode(enum.StrEnum):
    DENY = "deny"
    WARN = "warn"
    AUDIT = "audit"


class K8sImagePolicyArgs(TypedDict):
    """The inputs of K8sImagePolicy: its configuration, validated into
    aistack.k8s.image_policy.ImagePolicyArgs as a Python caller's is, and its wiring.
    """

    governance: Governance
    """Who owns the stack, where its data may live and who sees it (C4, G6)."""
    mode: NotRequired[K8sImagePolicyMode]
    """'deny' (default): refuse what breaks the policy (validationActions [Deny]). 'warn'
    ([Warn, Audit]) admits it with a warning to the client and an audit record, 'audit'
    ([Audit]) only records it: for a rollout, to see what would be refused before it is.
    AIS-E1-07 fails until it is 'deny'. Default: "deny".
    """
    namespace_labels: NotRequired[dict[str, str]]
    """The labels of the namespaces the policy is in force in. Default
    aistack.dev/managed=true: every namespace an aistack component creates. Default:
    {"aistack.dev/managed": "true"}.
    """
    exclude_namespaces: NotRequired[list[str]]
    """Namespaces left out although they match namespaceLabels, each a decision (a namespace
    another tool creates, whose labels you do not control). The Kubernetes system
    namespaces, and namespaces labelled aistack.dev/image-policy=exempt
    (stacks/kubernetes-operators labels so each operator namespace whose chart installs
    images by tag), are always left out. Default: [].
    """
    jobsets: NotRequired[bool]
    """Also judge JobSets (jobset.x-k8s.io). Harmless on a cluster without the JobSet CRD: the
    rule then matches nothing. Their pods are judged either way. Default: true.
    """
