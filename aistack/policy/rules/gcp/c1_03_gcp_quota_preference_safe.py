"""AIS-C1-03: Compute quota preferences name a quota id, can be answered, and never force a
decrease.

A QuotaPreference names a Cloud Quotas quota id (`NVIDIA-L4-GPUS-per-project-region`),
not a Compute metric name (`NVIDIA_L4_GPUS`, `compute.googleapis.com/nvidia_l4_gpus`):
the API answers 404 to a metric name. An increase needs a contact e-mail (Cloud Quotas v1
QuotaPreference reference: "required for increase quota preferences"). And
`ignore_safety_checks` (QUOTA_DECREASE_BELOW_USAGE, QUOTA_DECREASE_PERCENTAGE_TOO_HIGH,
pulumi-gcp SQuotaPreference docstring) exists only to push a decrease through the checks
that protect running capacity: a stack that requests GPU quota ahead of need never sets it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import QUOTA_PREFERENCE

#: Cloud Quotas quota ids: dash-separated, ending in their scope.
QUOTA_ID = re.compile(r"[A-Z0-9]+(-[A-Z0-9]+)*-per-project(-region|-zone)?")
_UNSET = ("", "QUOTA_SAFETY_CHECK_UNSPECIFIED")


@rule(
    id="AIS-C1-03",
    checklist=["C1"],
    info="Compute quota preferences name a quota id, give a contact e-mail and never "
    "ignore the quota safety checks.",
    why="A metric name instead of a quota id fails the request with 404, an increase "
    "without a contact e-mail is refused, and ignoring the safety checks lets a "
    "preference lower a quota below what running GPUs use.",
    fix="Use gcp.GpuQuota, or set quota_id to the Cloud Quotas id (e.g. "
    "NVIDIA-L4-GPUS-per-project-region), contact_email to a reachable address with quota "
    "update permission, and leave ignore_safety_checks unset.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for pref in graph.of_type(QUOTA_PREFERENCE):
        if str(pref.inputs.get("service") or "") != "compute.googleapis.com":
            continue
        quota_id = str(pref.inputs.get("quotaId") or "")
        problems = []
        if not QUOTA_ID.fullmatch(quota_id):
            problems.append(
                f"quota_id {quota_id!r} is not a Cloud Quotas quota id (a metric name?)."
            )
        if not pref.inputs.get("contactEmail"):
            problems.append("no contact_email: an increase is refused without one.")
        ignored = str(pref.inputs.get("ignoreSafetyChecks") or "")
        if ignored not in _UNSET:
            problems.append(f"ignore_safety_checks is {ignored}: it forces a decrease.")
        if problems:
            yield fail(pref, " ".join(problems))
        else:
            yield ok(pref, f"{quota_id}: a quota id, contactable, safety checks kept.")
