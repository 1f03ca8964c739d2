"""The budget guard's resource types in the simulated GCP, as their APIs return them: the
billing budget, its Pub/Sub topic, Monitoring channels and alert policies, the custom IAM
role and the gen2 Cloud Function that acts on the budget's messages."""

from __future__ import annotations

from typing import Any

from aistack.engine.gcp_cloud.project import digest

__all__ = ["budget_guard_resource"]

#: Cloud Run's region codes in service URLs (`https://<service>-<hash>-<code>.a.run.app`,
#: Cloud Run docs, "Service URLs"), for the regions aistack's catalog lists.
_RUN_REGION_CODES = {
    "europe-west4": "ez",
    "europe-west1": "ew",
    "us-central1": "uc",
    "us-east1": "ue",
    "us-east4": "uk",
    "us-west1": "uw",
    "asia-southeast1": "as",
    "asia-northeast1": "an",
}
#: The resource name id segments of the Monitoring API are 19-digit integers.
_MONITORING_ID = 10**18


def budget_guard_resource(
    typ: str,
    project: str,
    region: str,
    name: str,
    logical: str,
    inputs: dict[str, Any],
    out: dict[str, Any],
) -> str | None:
    """Ids and outputs of the budget guard's resource types, as their APIs return them;
    None for other types."""
    if typ == "gcp:billing/budget:Budget":
        # Budget API: `billingAccounts/<account>/budgets/<budget id>` (a UUID).
        hex_id = digest("budget", logical, project, length=32)
        uuid = f"{hex_id[:8]}-{hex_id[8:12]}-{hex_id[12:16]}-{hex_id[16:20]}-{hex_id[20:]}"
        resource_id = f"billingAccounts/{inputs.get('billingAccount', '')}/budgets/{uuid}"
        out.update(name=resource_id)
        return resource_id
    if typ == "gcp:pubsub/topic:Topic":
        # Pub/Sub: `projects/<project>/topics/<topic>`; the provider's `name` is the short one.
        out.update(name=name)
        return f"projects/{project}/topics/{name}"
    if typ in (
        "gcp:monitoring/notificationChannel:NotificationChannel",
        "gcp:monitoring/alertPolicy:AlertPolicy",
    ):
        # Monitoring API: `projects/<project>/notificationChannels/<19 digits>` (and
        # alertPolicies); the id is the name.
        collection = "notificationChannels" if "Channel" in typ else "alertPolicies"
        number = _MONITORING_ID + int(digest(typ, logical, project, length=15), 16)
        resource_id = (
            f"projects/{project}/{collection}/{number % (9 * _MONITORING_ID) + _MONITORING_ID}"
        )
        out.update(name=resource_id)
        if collection == "notificationChannels":
            out.setdefault("verificationStatus", "")
        return resource_id
    if typ == "gcp:projects/iAMCustomRole:IAMCustomRole":
        # IAM: custom project roles are `projects/<project>/roles/<role id>`.
        resource_id = f"projects/{project}/roles/{inputs.get('roleId', name)}"
        out.update(name=resource_id, deleted=False)
        return resource_id
    if typ == "gcp:cloudfunctionsv2/function:Function":
        # Cloud Functions v2: `projects/<p>/locations/<l>/functions/<name>`; a gen2 function
        # runs as the Cloud Run service of the same name.
        location = str(inputs.get("location") or region)
        resource_id = f"projects/{project}/locations/{location}/functions/{name}"
        service = dict(inputs.get("serviceConfig") or {})
        code = _RUN_REGION_CODES.get(location, "ez")
        service.update(
            service=f"projects/{project}/locations/{location}/services/{name}",
            uri=f"https://{name}-{digest('run', project, length=10)}-{code}.a.run.app",
            gcfUri="",
        )
        out.update(
            name=name,
            environment="GEN_2",
            state="ACTIVE",
            url=f"https://{location}-{project}.cloudfunctions.net/{name}",
            serviceConfig=service,
        )
        if inputs.get("eventTrigger"):
            trigger = dict(inputs["eventTrigger"])
            trigger.setdefault(
                "trigger",
                f"projects/{project}/locations/{location}/triggers/{name}-{digest(name)[:6]}",
            )
            out["eventTrigger"] = trigger
        return resource_id
    return None
