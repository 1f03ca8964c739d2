"""Budget kill switch: scale one stack's training capacity to zero when its budget runs out.

AWS Budgets publishes to an SNS topic when the monthly budget reaches 100 %, and the topic
invokes this Lambda. It acts on resources tagged `aistack:stack=<AISTACK_STACK>` **and**
`aistack:workload=training`, and on nothing else:

* Auto Scaling groups: `MinSize` and `DesiredCapacity` set to 0. `MaxSize` is left alone so
  the team can scale back up by hand. The old sizes go into the group's
  `aistack:kill-switch-previous` tag (`min=1,desired=2`) first. Groups that AWS Batch
  manages (named `AWSBatch-*`, tagged `AWSBatchServiceTag`) are skipped even if Batch copied
  the stack's tags onto them: Batch sizes them itself, through the compute environment.
* Batch job queues: set to `DISABLED` if they use a matched compute environment or carry
  the two tags themselves, so no new job starts.
* Batch jobs of those queues that are `SUBMITTED`, `PENDING`, `RUNNABLE`, `STARTING` or
  `RUNNING`: terminated (`TerminateJob`; Batch cancels the ones not yet started and stops
  the running ones, which then end `FAILED`). Disabling a queue alone lets its running
  jobs go on to their attempt timeout, at GPU prices.
* AWS Batch managed compute environments: `state` set to `DISABLED` (it then never scales
  out) and `minvCpus` to 0, so it scales in as its jobs end. `maxvCpus` goes to 0 too, but
  only once `desiredvCpus` is 0: Batch refuses a `maxvCpus` below `desiredvCpus`
  ("desiredvCpus should be between minvCpus and maxvCpus") and refuses to lower
  `desiredvCpus` by hand ("Manually scaling down compute environment is not supported"),
  so while the environment still runs instances, a later run (a retry, or the next alert)
  lowers `maxvCpus`. Fargate has only `maxvCpus`. The old sizes go into the same tag
  (`min=0,max=256,desired=4`), written the first time only.
* Standalone EC2 instances (those not started by an Auto Scaling group) that are pending or
  running: stopped, never terminated, because their disks may hold state. Instances that an
  Auto Scaling group launched are handled by scaling that group; Batch's instances (whose
  group Batch manages) go when their environment scales in. Instances Karpenter launched
  (tagged `karpenter.sh/nodepool`) are left alone and reported: Karpenter would replace a
  stopped one, so their training stops in the cluster, where the queue is held.

The run's report (what it stopped, what it left alone and why, whether anything failed) is
published to the alert topic the team reads (`AISTACK_REPORT_TOPIC_ARN`), so the alert says
what was stopped.

Idempotent: a resource that is already at zero, disabled or stopped is reported under
`unchanged` and is not touched again. In particular the previous-size tag is not
overwritten on a second run. A resource that does not exist any more, or is deleted between
listing and updating, is reported as unchanged and is not an error. Any other AWS error is
logged, the remaining resources are still handled, and the first such error is then
re-raised so that Lambda retries and the failure shows.

Environment:
    AISTACK_STACK    required. The stack whose training capacity is stopped.
    AISTACK_DRY_RUN  "true" to report what would change without changing anything.
    AISTACK_REPORT_TOPIC_ARN  optional. The SNS topic the run's report is published to.

This file is deployed on its own as the Lambda's code, so it imports only the standard
library and boto3. In particular it must not import aistack.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any

import boto3  # type: ignore[import-untyped]
from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]

__all__ = [
    "DISCOVERY_ACTIONS",
    "MUTATING_ACTIONS",
    "PREVIOUS_SIZE_TAG",
    "REPORT_ACTIONS",
    "REQUIRED_ACTIONS",
    "STACK_TAG",
    "WORKLOAD_TAG",
    "KillSwitchConfigError",
    "handler",
    "kill_switch",
    "report_text",
]

# These two mirror aistack.config.STACK_TAG and aistack.config.WORKLOAD_TAG. This file cannot
# import aistack because it is deployed alone, so keep them in step by hand.
STACK_TAG = "aistack:stack"
WORKLOAD_TAG = "aistack:workload"
#: The only workload the kill switch stops.
TRAINING_WORKLOAD = "training"
#: Tag that records the sizes before the kill switch acted, so a human can restore them.
PREVIOUS_SIZE_TAG = "aistack:kill-switch-previous"

STACK_ENV = "AISTACK_STACK"
DRY_RUN_ENV = "AISTACK_DRY_RUN"

#: Read-only calls. IAM cannot scope these to resources, so they need `Resource: "*"`.
DISCOVERY_ACTIONS: dict[str, list[str]] = {
    "autoscaling": ["autoscaling:DescribeAutoScalingGroups"],
    "batch": ["batch:DescribeComputeEnvironments", "batch:DescribeJobQueues", "batch:ListJobs"],
    "ec2": ["ec2:DescribeInstances"],
}
#: Calls that change resources. Condition these on `aws:ResourceTag/aistack:stack`, so job
#: queues must carry the stack tag too; except `TerminateJob`, as Batch jobs do not carry
#: the stack tag (`propagateTags` copies tags to the ECS task, not to the job): the handler
#: picks jobs by the stack's queues instead.
MUTATING_ACTIONS: dict[str, list[str]] = {
    "autoscaling": ["autoscaling:CreateOrUpdateTags", "autoscaling:UpdateAutoScalingGroup"],
    "batch": [
        "batch:TagResource",
        "batch:TerminateJob",
        "batch:UpdateComputeEnvironment",
        "batch:UpdateJobQueue",
    ],
    "ec2": ["ec2:StopInstances"],
}
#: The report of what the run stopped, published to the alert topic the team reads.
REPORT_ACTIONS: dict[str, list[str]] = {"sns": ["sns:Publish"]}
#: Every IAM action the handler needs, by service.
REQUIRED_ACTIONS: dict[str, list[str]] = {
    service: DISCOVERY_ACTIONS.get(service, [])
    + MUTATING_ACTIONS.get(service, [])
    + REPORT_ACTIONS.get(service, [])
    for service in sorted(
        DISCOVERY_ACTIONS.keys() | MUTATING_ACTIONS.keys() | REPORT_ACTIONS.keys()
    )
}
#: SNS caps a subject at 100 characters and a message at 256 KB.
_SUBJECT_LIMIT = 100
_MESSAGE_LIMIT = 200_000

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off", ""})
# The tag that AWS puts on every instance an Auto Scaling group launches. Batch and EKS node
# groups launch their instances through Auto Scaling groups too.
_ASG_INSTANCE_TAG = "aws:autoscaling:groupName"
#: Karpenter tags every instance it launches with its NodePool (karpenter-provider-aws
#: v1.14.1, pkg/providers/instance: `karpenter.sh/nodepool`). Stopping one only has
#: Karpenter replace it: the node is gone, its pods are rescheduled, a new GPU instance
#: launches. Such capacity is stopped in the cluster (the queue held, the NodePool's limits).
_KARPENTER_INSTANCE_TAG = "karpenter.sh/nodepool"
# How AWS Batch marks what it creates: its service-linked role may only create and update
# Auto Scaling groups named `AWSBatch*`, and only tag resources carrying `AWSBatchServiceTag`
# (AWS Batch User Guide, "Using service-linked roles for AWS Batch", AWSServiceRoleForBatch).
_BATCH_GROUP_PREFIX = "AWSBatch"
_BATCH_SERVICE_TAG = "AWSBatchServiceTag"
#: Job states TerminateJob acts on; ListJobs takes one status per call.
_ACTIVE_JOB_STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE", "STARTING", "RUNNING")
_TERMINATE_REASON = "aistack budget kill switch: the stack's monthly budget is spent"
_GONE_STATUSES = frozenset({"DELETING", "DELETED"})
_INSTANCE_STATES = ["pending", "running", "stopping", "stopped"]
_STOPPED_STATES = frozenset({"stopping", "stopped", "shutting-down", "terminated"})
_LOG_TEXT_LIMIT = 2000

logger = logging.getLogger(__name__)
logger.setLevel(logging.INFO)


class KillSwitchConfigError(RuntimeError):
    """The Lambda's environment is wrong, so the kill switch refuses to act."""


@dataclass
class _Run:
    """One pass over a stack's training resources: what changed and what failed."""

    stack: str
    dry_run: bool
    summary: dict[str, Any] = field(init=False)
    failures: list[Exception] = field(default_factory=list)
    #: What each change did, in words, for the report.
    actions: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.summary = {
            "stack": self.stack,
            "dry_run": self.dry_run,
            "auto_scaling_groups": [],
            "batch_compute_environments": [],
            "job_queues": [],
            "jobs": [],
            "instances": [],
            "unchanged": [],
        }

    def changed(self, section: str, entry: dict[str, Any], action: str) -> None:
        self.summary[section].append(entry)
        prefix = "[dry run] would " if self.dry_run else ""
        self.actions.append(f"{prefix}{action}")
        logger.info("%s%s", prefix, action)

    def unchanged(self, kind: str, ident: str, reason: str) -> None:
        self.summary["unchanged"].append({"kind": kind, "id": ident, "reason": reason})
        logger.info("unchanged %s %s: %s", kind, ident, reason)

    def failed(self, what: str, error: Exception) -> None:
        self.failures.append(error)
        logger.error("failed to %s: %s", what, error)


def handler(event: Any, context: Any) -> dict[str, Any]:
    """Lambda entry point: read the environment, log the notification, stop the capacity,
    and tell the alert topic what was stopped."""
    stack = _stack_from_env()
    dry_run = _dry_run_from_env()
    _log_notification(event)
    report_topic = os.environ.get("AISTACK_REPORT_TOPIC_ARN", "").strip() or None
    return kill_switch(stack, dry_run=dry_run, report_topic=report_topic)


def kill_switch(
    stack: str,
    *,
    dry_run: bool = False,
    session: boto3.session.Session | None = None,
    report_topic: str | None = None,
) -> dict[str, Any]:
    """Scale `stack`'s training resources to zero and return a JSON-serialisable summary."""
    if not stack:
        raise KillSwitchConfigError("kill_switch needs a stack name")
    # boto3's default session keeps its loaded service models between warm invocations.
    client = session.client if session is not None else boto3.client
    run = _Run(stack=stack, dry_run=dry_run)
    logger.info(
        "budget kill switch for stack %r (%s): %s=%s and %s=%s",
        stack,
        "dry run" if dry_run else "acting",
        STACK_TAG,
        stack,
        WORKLOAD_TAG,
        TRAINING_WORKLOAD,
    )
    _auto_scaling_groups(run, client("autoscaling"))
    _batch(run, client("batch"))
    _instances(run, client("ec2"))
    logger.info("summary: %s", json.dumps(run.summary, sort_keys=True))
    if report_topic:
        _report(run, client("sns"), report_topic)
    if run.failures:
        logger.error(
            "%d action(s) failed; re-raising the first so that Lambda retries", len(run.failures)
        )
        raise run.failures[0]
    return run.summary


# -- environment and event -------------------------------------------------------------------


def report_text(run: _Run) -> tuple[str, str]:
    """(subject, message) saying what the run stopped, what it left alone and why, and
    whether anything failed: what the team reads on the alert topic."""
    verb = "would stop" if run.dry_run else "stopped"
    subject = f"aistack kill switch {verb} {len(run.actions)} resource(s) of {run.stack}"
    lines = [
        f"The budget kill switch ran for stack {run.stack}"
        + (" as a dry run: nothing was changed." if run.dry_run else "."),
        "",
        f"Stopped ({len(run.actions)}):"
        if not run.dry_run
        else f"Would stop ({len(run.actions)}):",
        *(f"- {action}" for action in run.actions),
        "",
        f"Left alone ({len(run.summary['unchanged'])}):",
        *(f"- {e['kind']} {e['id']}: {e['reason']}" for e in run.summary["unchanged"]),
    ]
    if run.failures:
        lines += ["", f"Failed ({len(run.failures)}): {_clip(run.failures[0])}; Lambda retries."]
    return subject[:_SUBJECT_LIMIT], "\n".join(lines)[:_MESSAGE_LIMIT]


def _report(run: _Run, client: Any, topic: str) -> None:
    """Publish the report; a failure to publish is logged, and the stopping stands."""
    subject, message = report_text(run)
    try:
        client.publish(TopicArn=topic, Subject=subject, Message=message)
    except (ClientError, BotoCoreError) as error:
        logger.error("could not publish the report to %s: %s", topic, error)


def _stack_from_env() -> str:
    stack = os.environ.get(STACK_ENV, "").strip()
    if not stack:
        raise KillSwitchConfigError(
            f"{STACK_ENV} is not set: the kill switch does not know which stack's training "
            f"capacity to stop, so it refuses to act. Set {STACK_ENV} to the stack name that "
            f"the resources carry in their {STACK_TAG!r} tag."
        )
    return stack


def _dry_run_from_env() -> bool:
    raw = os.environ.get(DRY_RUN_ENV, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise KillSwitchConfigError(
        f"{DRY_RUN_ENV}={os.environ[DRY_RUN_ENV]!r} is neither true nor false; set it to "
        f"'true' to only report, or 'false' (or leave it unset) to act."
    )


def _log_notification(event: Any) -> None:
    """Log the budget notification's subject and text; tolerate any event shape."""
    records = event.get("Records") if isinstance(event, dict) else None
    notifications = []
    for record in records if isinstance(records, list) else []:
        sns = record.get("Sns") if isinstance(record, dict) else None
        if isinstance(sns, dict):
            notifications.append((sns.get("Subject"), sns.get("Message")))
    if not notifications:
        keys = sorted(map(str, event)) if isinstance(event, dict) else []
        logger.info("invoked without an SNS budget notification (event keys: %s)", keys)
    for subject, message in notifications:
        logger.info(
            "budget notification: subject=%s message=%s",
            json.dumps(_clip(subject)),
            json.dumps(_clip(message)),
        )


def _clip(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= _LOG_TEXT_LIMIT else text[:_LOG_TEXT_LIMIT] + "..."


# -- helpers ---------------------------------------------------------------------------------


def _is_ours(tags: dict[str, str], stack: str) -> bool:
    return tags.get(STACK_TAG) == stack and tags.get(WORKLOAD_TAG) == TRAINING_WORKLOAD


def _is_gone(error: ClientError) -> bool:
    """Whether `error` says the resource does not exist (any more)."""
    details = error.response.get("Error", {})
    code = str(details.get("Code", ""))
    message = str(details.get("Message", "")).lower()
    if code.endswith(".NotFound") or code in {"ResourceNotFoundException", "NotFoundException"}:
        return True
    return code in {"ValidationError", "ClientException"} and (
        "not found" in message or "does not exist" in message
    )


def _sizes(**sizes: Any) -> str:
    return ",".join(f"{name}={value}" for name, value in sizes.items() if value is not None)


# -- Auto Scaling ----------------------------------------------------------------------------


def _auto_scaling_groups(run: _Run, client: Any) -> None:
    kind = "auto_scaling_group"
    try:
        paginator = client.get_paginator("describe_auto_scaling_groups")
        filters = [
            {"Name": f"tag:{STACK_TAG}", "Values": [run.stack]},
            {"Name": f"tag:{WORKLOAD_TAG}", "Values": [TRAINING_WORKLOAD]},
        ]
        groups = [
            group
            for page in paginator.paginate(Filters=filters)
            for group in page.get("AutoScalingGroups", [])
            # The server filtered already; check again so a filter quirk cannot widen the net.
            if _is_ours({t["Key"]: t["Value"] for t in group.get("Tags", [])}, run.stack)
        ]
    except (ClientError, BotoCoreError) as error:
        run.failed("list Auto Scaling groups", error)
        return

    for group in groups:
        name = group["AutoScalingGroupName"]
        min_size, desired, max_size = group["MinSize"], group["DesiredCapacity"], group["MaxSize"]
        if _batch_manages(name, {t["Key"] for t in group.get("Tags", [])}):
            run.unchanged(
                kind, name, "managed by AWS Batch, which sizes it from its compute environment"
            )
            continue
        if group.get("Status"):  # only set while the group is being deleted
            run.unchanged(kind, name, f"group is being deleted ({group['Status']})")
            continue
        if min_size == 0 and desired == 0:
            run.unchanged(kind, name, "already at zero (min=0, desired=0)")
            continue
        previous = _sizes(min=min_size, desired=desired)
        if not run.dry_run:
            try:
                # Record the old sizes first: if the update then fails, a retry re-records
                # the same sizes; the other order could lose them.
                client.create_or_update_tags(
                    Tags=[
                        {
                            "ResourceId": name,
                            "ResourceType": "auto-scaling-group",
                            "Key": PREVIOUS_SIZE_TAG,
                            "Value": previous,
                            "PropagateAtLaunch": False,
                        }
                    ]
                )
                client.update_auto_scaling_group(
                    AutoScalingGroupName=name, MinSize=0, DesiredCapacity=0
                )
            except ClientError as error:
                if _is_gone(error):
                    run.unchanged(kind, name, "no longer exists")
                else:
                    run.failed(f"scale Auto Scaling group {name} to zero", error)
                continue
        run.changed(
            "auto_scaling_groups",
            {"name": name, "previous": {"min": min_size, "desired": desired, "max": max_size}},
            f"scale Auto Scaling group {name} to zero: min {min_size}->0, "
            f"desired {desired}->0, max {max_size} kept; {PREVIOUS_SIZE_TAG}={previous}",
        )


# -- Batch -----------------------------------------------------------------------------------


def _batch_manages(group_name: str, tag_keys: set[str]) -> bool:
    """Whether AWS Batch created this Auto Scaling group for a compute environment."""
    return group_name.startswith(_BATCH_GROUP_PREFIX) or _BATCH_SERVICE_TAG in tag_keys


def _batch(run: _Run, client: Any) -> None:
    # Queues first, so that no new job starts; then the jobs, so that the environments can
    # scale in; then the environments.
    environments = _compute_environments(run, client)
    matched = {key for env in environments for key in (env["name"], env["arn"])}
    queues = _job_queues(run, client, matched)
    _jobs(run, client, queues)
    for env in environments:
        _stop_compute_environment(run, client, env)


def _compute_environments(run: _Run, client: Any) -> list[dict[str, Any]]:
    """The stack's training compute environments that still exist (name, arn, raw)."""
    kind = "batch_compute_environment"
    try:
        paginator = client.get_paginator("describe_compute_environments")
        # DescribeComputeEnvironments cannot filter by tag, but returns each one's tags.
        environments = [
            env
            for page in paginator.paginate()
            for env in page.get("computeEnvironments", [])
            if _is_ours(env.get("tags") or {}, run.stack)
        ]
    except (ClientError, BotoCoreError) as error:
        run.failed("list Batch compute environments", error)
        return []

    found = []
    for env in environments:
        name, arn = env["computeEnvironmentName"], env["computeEnvironmentArn"]
        if env.get("status") in _GONE_STATUSES:
            run.unchanged(kind, name, f"compute environment is {env['status']}")
            continue
        found.append({"name": name, "arn": arn, "env": env})
    return found


def _stop_compute_environment(run: _Run, client: Any, found: dict[str, Any]) -> None:
    """Disable a managed environment and lower its sizes as far as Batch lets us now."""
    kind = "batch_compute_environment"
    name, arn, env = found["name"], found["arn"], found["env"]
    if env.get("type") != "MANAGED":
        run.unchanged(kind, name, "unmanaged: Batch does not size it; queues are disabled")
        return
    resources = env.get("computeResources") or {}
    fargate = "FARGATE" in str(resources.get("type", ""))
    min_v, max_v = resources.get("minvCpus"), resources.get("maxvCpus")
    desired = resources.get("desiredvCpus")
    state = env.get("state")
    sizes: dict[str, int] = {}
    if min_v and not fargate:
        sizes["minvCpus"] = 0
    # maxvCpus may not go below desiredvCpus, and desiredvCpus cannot be lowered by hand:
    # until Batch has scaled in by itself, maxvCpus stays (AWS Batch User Guide, "Error
    # message when you update the desiredvCpus setting").
    if max_v and (fargate or not desired):
        sizes["maxvCpus"] = 0
    if state == "DISABLED" and not sizes:
        reason = "already disabled at zero (maxvCpus=0)"
        if max_v:
            reason = f"already disabled; Batch is scaling it in (desiredvCpus={desired})"
        run.unchanged(kind, name, reason)
        return
    previous = _sizes(min=min_v, max=max_v, desired=desired)
    # The tag keeps the sizes from before the first run; a later run, which finds the
    # environment disabled and min already 0, must not overwrite it.
    record = state != "DISABLED" or PREVIOUS_SIZE_TAG not in (env.get("tags") or {})
    if not run.dry_run:
        try:
            if record:
                client.tag_resource(resourceArn=arn, tags={PREVIOUS_SIZE_TAG: previous})
            sizes = _update_compute_environment(client, arn, sizes)
        except ClientError as error:
            if _is_gone(error):
                run.unchanged(kind, name, "no longer exists")
            else:
                run.failed(f"stop Batch compute environment {name}", error)
            return
    steps = [f"state {state}->DISABLED"] if state != "DISABLED" else []
    steps += [f"{key} {resources.get(key)}->0" for key in sizes]
    if "maxvCpus" not in sizes and max_v:
        steps.append(f"maxvCpus {max_v} kept until Batch scales in (desiredvCpus={desired})")
    run.changed(
        "batch_compute_environments",
        {
            "name": name,
            "arn": arn,
            "previous": {
                "state": state,
                "minvCpus": min_v,
                "maxvCpus": max_v,
                "desiredvCpus": desired,
            },
        },
        f"stop Batch compute environment {name}: "
        + ", ".join(steps)
        + (f"; {PREVIOUS_SIZE_TAG}={previous}" if record else ""),
    )


def _update_compute_environment(client: Any, arn: str, sizes: dict[str, int]) -> dict[str, int]:
    """Disable the environment with `sizes`; return the sizes Batch accepted."""
    request: dict[str, Any] = {"computeEnvironment": arn, "state": "DISABLED"}
    try:
        client.update_compute_environment(**request, **_resources(sizes))
        return sizes
    except ClientError as error:
        # Batch launched instances between our read and this update, so desiredvCpus is now
        # above 0: it refuses maxvCpus=0. Disable it and lower minvCpus alone; a later run
        # lowers maxvCpus.
        if "maxvCpus" not in sizes or not _refuses_max_below_desired(error):
            raise
    sizes = {key: value for key, value in sizes.items() if key != "maxvCpus"}
    client.update_compute_environment(**request, **_resources(sizes))
    return sizes


def _resources(sizes: dict[str, int]) -> dict[str, Any]:
    return {"computeResources": sizes} if sizes else {}


def _refuses_max_below_desired(error: ClientError) -> bool:
    details = error.response.get("Error", {})
    message = str(details.get("Message", ""))
    return details.get("Code") == "ClientException" and "desiredvCpus" in message


def _job_queues(run: _Run, client: Any, environments: set[str]) -> list[dict[str, Any]]:
    """Disable the queues that feed `environments` or that carry the stack's training tags.

    Returns every such queue that still exists, disabled before or now: their jobs go next.
    """
    kind = "job_queue"
    try:
        paginator = client.get_paginator("describe_job_queues")
        queues = [
            queue
            for page in paginator.paginate()
            for queue in page.get("jobQueues", [])
            if _is_ours(queue.get("tags") or {}, run.stack)
            or any(
                order.get("computeEnvironment") in environments
                for order in queue.get("computeEnvironmentOrder", [])
            )
        ]
    except (ClientError, BotoCoreError) as error:
        run.failed("list Batch job queues", error)
        return []

    remaining = []
    for queue in queues:
        name, arn, state = queue["jobQueueName"], queue["jobQueueArn"], queue.get("state")
        if queue.get("status") in _GONE_STATUSES:
            run.unchanged(kind, name, f"job queue is {queue['status']}")
            continue
        if state == "DISABLED":
            run.unchanged(kind, name, "already disabled")
            remaining.append(queue)
            continue
        if not run.dry_run:
            try:
                client.update_job_queue(jobQueue=arn, state="DISABLED")
            except ClientError as error:
                if _is_gone(error):
                    run.unchanged(kind, name, "no longer exists")
                    continue
                # Still terminate its jobs: a queue left enabled is no reason to keep
                # paying for the ones already running.
                run.failed(f"disable Batch job queue {name}", error)
                remaining.append(queue)
                continue
        remaining.append(queue)
        run.changed(
            "job_queues",
            {"name": name, "arn": arn, "previous_state": state},
            f"disable Batch job queue {name}: state {state}->DISABLED",
        )
    return remaining


def _jobs(run: _Run, client: Any, queues: list[dict[str, Any]]) -> None:
    """Terminate the queues' jobs that have not finished."""
    kind = "job"
    for queue in queues:
        queue_name = queue["jobQueueName"]
        for status in _ACTIVE_JOB_STATUSES:
            try:
                paginator = client.get_paginator("list_jobs")
                jobs = [
                    job
                    for page in paginator.paginate(jobQueue=queue["jobQueueArn"], jobStatus=status)
                    for job in page.get("jobSummaryList", [])
                ]
            except ClientError as error:
                if _is_gone(error):
                    run.unchanged("job_queue", queue_name, "no longer exists")
                    break
                run.failed(f"list {status} jobs of Batch job queue {queue_name}", error)
                continue
            except BotoCoreError as error:
                run.failed(f"list {status} jobs of Batch job queue {queue_name}", error)
                continue
            for job in jobs:
                job_id, job_name = job["jobId"], job.get("jobName", "")
                if not run.dry_run:
                    try:
                        client.terminate_job(jobId=job_id, reason=_TERMINATE_REASON)
                    except ClientError as error:
                        if _is_gone(error):
                            run.unchanged(kind, job_id, "no longer exists")
                        else:
                            run.failed(f"terminate Batch job {job_id} ({job_name})", error)
                        continue
                run.changed(
                    "jobs",
                    {
                        "id": job_id,
                        "name": job_name,
                        "queue": queue_name,
                        "previous_status": status,
                    },
                    f"terminate Batch job {job_id} ({job_name}) of queue {queue_name}: "
                    f"status {status}->FAILED",
                )


# -- EC2 -------------------------------------------------------------------------------------


def _instances(run: _Run, client: Any) -> None:
    kind = "instance"
    try:
        paginator = client.get_paginator("describe_instances")
        filters = [
            {"Name": f"tag:{STACK_TAG}", "Values": [run.stack]},
            {"Name": f"tag:{WORKLOAD_TAG}", "Values": [TRAINING_WORKLOAD]},
            {"Name": "instance-state-name", "Values": _INSTANCE_STATES},
        ]
        instances = [
            instance
            for page in paginator.paginate(Filters=filters)
            for reservation in page.get("Reservations", [])
            for instance in reservation.get("Instances", [])
        ]
    except (ClientError, BotoCoreError) as error:
        run.failed("list EC2 instances", error)
        return

    for instance in instances:
        instance_id = instance["InstanceId"]
        state = instance.get("State", {}).get("Name", "")
        tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
        if not _is_ours(tags, run.stack):
            continue
        if _ASG_INSTANCE_TAG in tags:
            group = tags[_ASG_INSTANCE_TAG]
            run.unchanged(kind, instance_id, f"launched by Auto Scaling group {group}")
            continue
        if _KARPENTER_INSTANCE_TAG in tags:
            pool = tags[_KARPENTER_INSTANCE_TAG]
            run.unchanged(
                kind,
                instance_id,
                f"launched by Karpenter NodePool {pool}: stopping it would only have it "
                "replaced; hold the training queue (k8s.TrainingQueue stop_command) and set "
                "the NodePool's limits to 0",
            )
            continue
        if state in _STOPPED_STATES:
            run.unchanged(kind, instance_id, f"already {state}")
            continue
        if not run.dry_run:
            try:
                client.stop_instances(InstanceIds=[instance_id])
            except ClientError as error:
                if _is_gone(error):
                    run.unchanged(kind, instance_id, "no longer exists")
                elif error.response.get("Error", {}).get("Code") == "IncorrectInstanceState":
                    _not_stoppable(run, client, instance_id, error)
                else:
                    run.failed(f"stop EC2 instance {instance_id}", error)
                continue
        run.changed(
            "instances",
            {"id": instance_id, "previous_state": state},
            f"stop EC2 instance {instance_id}: state {state}->stopped",
        )


def _not_stoppable(run: _Run, client: Any, instance_id: str, error: ClientError) -> None:
    """StopInstances refused the instance's state: fine if it stopped or went meanwhile."""
    try:
        reservations = client.describe_instances(InstanceIds=[instance_id])["Reservations"]
        states = [i["State"]["Name"] for r in reservations for i in r.get("Instances", [])]
    except ClientError as describe_error:
        if _is_gone(describe_error):
            run.unchanged("instance", instance_id, "no longer exists")
            return
        states = []
    if states and all(state in _STOPPED_STATES for state in states):
        run.unchanged("instance", instance_id, f"already {states[0]}")
    else:  # e.g. still pending: fail, so that Lambda retries once it is running
        run.failed(f"stop EC2 instance {instance_id}", error)
