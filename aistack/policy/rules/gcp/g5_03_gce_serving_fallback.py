"""AIS-G5-03: serving VMs declare, and their gateway gives, an answer when the model is down.

The choice is the template's `aistack-fallback` label (gcp.InferenceTier: 'error', a JSON
503 with Retry-After). Where the startup script packs the aistack gateway's nginx.conf, it
must also do it: 502, 503 and 504 from the model server go (`error_page ... = @name`) to a
named location that answers 503.
"""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import serving_templates, startup_files

FALLBACK_LABEL = "aistack-fallback"
FALLBACKS = ("error", "previous_version")
_ERROR_PAGE = re.compile(r"^\s*error_page\s+([\d\s]+?)\s*=\s*(@[\w-]+);", re.M)


def _answers_503(conf: str, location: str) -> bool:
    block = re.search(rf"location\s+{re.escape(location)}\s*\{{([^}}]*)\}}", conf)
    return block is not None and bool(re.search(r"^\s*return\s+503\b", block.group(1), re.M))


def conf_problem(conf: str) -> str | None:
    """Why the gateway does not answer 503 when the model server fails; None when it does."""
    for codes, location in _ERROR_PAGE.findall(conf):
        if {"502", "503", "504"} <= set(codes.split()) and _answers_503(conf, location):
            return None
    return "the gateway's nginx.conf sends model-server failures (502-504) to no 503 answer"


@rule(
    id="AIS-G5-03",
    checklist=["G5"],
    info=f"Serving instance templates label {FALLBACK_LABEL} (error or previous_version); "
    "an aistack gateway on them answers 503 when the model server fails.",
    why="Clients and operators need a defined answer when the model is down: a clear, "
    "retryable error or the previous version, never a hang or a bare 502.",
    fix="Use gcp.InferenceTier (fallback 'error'), or run the aistack gateway and label "
    f"your serving templates {FALLBACK_LABEL}=error.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        value = (template.inputs.get("labels") or {}).get(FALLBACK_LABEL)
        conf = startup_files(template).get("nginx.conf")
        problem = conf_problem(conf) if conf is not None else None
        if value not in FALLBACKS:
            yield fail(template, f"no declared fallback ({FALLBACK_LABEL} is {value!r}).")
        elif problem:
            yield fail(template, f"declares {value}, but {problem}.")
        else:
            yield ok(template, f"fallback when the model is down: {value}.")
