"""Cost estimator for SageMaker Studio domains: JupyterLab instance hours per user.

A Studio domain costs nothing itself; its users' JupyterLab and Code Editor apps bill per
instance-hour from start to shutdown. With idle shutdown, a user pays for the hours they
work plus one idle timeout at the end of each session (the app waits that long before it
stops). The naive baseline is the same users on the same instance type, never shut down:
730 hours a month each.

The home EFS volume bills per GB stored; how much users keep there is not a stack setting,
so it is left out (and is the same in both columns).
"""

from __future__ import annotations

from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.baseline import SESSION_HOURS
from aistack.cost.prices import aws as prices
from aistack.engine.graph import Resource, StackGraph

DOMAIN = "aws:sagemaker/domain:Domain"
USER_PROFILE = "aws:sagemaker/userProfile:UserProfile"
#: SageMaker's own default when a domain names no JupyterLab instance type.
STUDIO_DEFAULT_INSTANCE = "ml.t3.medium"
#: USD per instance-hour by SageMaker instance type; types without a list price here get no
#: number (the basis says so) rather than a guess.
HOURLY = {"ml.t3.medium": prices.SAGEMAKER_ML_T3_MEDIUM_HOUR}


def _users(graph: StackGraph, domain: Resource) -> int:
    domain_id = domain.outputs.get("id") or domain.id
    return sum(
        1 for profile in graph.of_type(USER_PROFILE) if profile.inputs.get("domainId") == domain_id
    )


def _idle_minutes(domain: Resource) -> float | None:
    """The JupyterLab idle timeout, or None when idle shutdown is not on."""
    settings = domain.get(
        "defaultUserSettings", "jupyterLabAppSettings", "appLifecycleManagement", "idleSettings"
    )
    if not isinstance(settings, dict):
        return None
    if str(settings.get("lifecycleManagement", "")).upper() != "ENABLED":
        return None
    timeout = settings.get("idleTimeoutInMinutes")
    return float(timeout) if timeout is not None else None


@estimator(DOMAIN)
def _domain(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    instance = (
        resource.get(
            "defaultUserSettings", "jupyterLabAppSettings", "defaultResourceSpec", "instanceType"
        )
        or STUDIO_DEFAULT_INSTANCE
    )
    users = _users(graph, resource)
    hourly = HOURLY.get(str(instance))
    if hourly is None:
        return (
            0.0,
            0.0,
            (
                f"{users} Studio user(s) on {instance}: no list price for {instance} in "
                "aistack.cost.prices.aws, so not estimated"
            ),
        )
    work = profile.notebook_hours_per_month
    idle = _idle_minutes(resource)
    if idle is None:
        # Without idle shutdown an app runs until someone stops it: assume nobody does.
        billed, how = float(HOURS_PER_MONTH), "no idle shutdown: on 24x7"
    else:
        sessions = work / SESSION_HOURS
        billed = min(float(HOURS_PER_MONTH), work + sessions * idle / 60)
        how = (
            f"{work:g} h of work + {idle:g} idle min after each of {sessions:g} sessions "
            f"({SESSION_HOURS:g} h each) = {billed:g} h"
        )
    monthly = users * billed * hourly
    naive = users * HOURS_PER_MONTH * hourly
    return (
        monthly,
        naive,
        (
            f"{users} Studio user(s) x JupyterLab on {instance} at ${hourly}/h; {how} per user; "
            f"naive: the same notebooks left on 24x7 ({HOURS_PER_MONTH} h)"
        ),
    )
