"""AIS-C5-01: notebooks shut down when idle.

Studio domains: JupyterLab and Code Editor, the two Studio apps that run on a billed
instance and have built-in idle shutdown, must have it ENABLED in the domain's default user
settings with an idle timeout of at most MAX_IDLE_MINUTES, and, when users may choose their
own timeout, a ceiling no higher. Shared-space defaults and user profiles that override
these settings are held to the same bar (profile settings take precedence over the
domain's).

Classic notebook instances have no built-in idle shutdown: one complies only with a
lifecycle configuration whose start script stops the instance when idle (AWS's
`autostop.py` sample, or any script calling StopNotebookInstance).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule

DOMAIN = "aws:sagemaker/domain:Domain"
USER_PROFILE = "aws:sagemaker/userProfile:UserProfile"
NOTEBOOK_INSTANCE = "aws:sagemaker/notebookInstance:NotebookInstance"
LIFECYCLE_CONFIG = (
    "aws:sagemaker/notebookInstanceLifecycleConfiguration:NotebookInstanceLifecycleConfiguration"
)
#: Four hours: a long meeting or lunch, not a night. Past that, an idle app is forgotten.
MAX_IDLE_MINUTES = 240
#: What an idle-stop start script contains: AWS's sample (autostop.py, which calls
#: stop_notebook_instance) or any direct StopNotebookInstance call.
_IDLE_STOP = re.compile(
    r"autostop|auto-stop|stop[-_]notebook[-_]instance|StopNotebookInstance", re.IGNORECASE
)
#: (settings block, app settings key, label, required) checked on a domain. Not required:
#: checked only when the domain sets that block.
_DOMAIN_APPS = (
    ("defaultUserSettings", "jupyterLabAppSettings", "JupyterLab", True),
    ("defaultUserSettings", "codeEditorAppSettings", "Code Editor", True),
    ("defaultSpaceSettings", "jupyterLabAppSettings", "shared-space JupyterLab", False),
)
_PROFILE_APPS = (("jupyterLabAppSettings", "JupyterLab"), ("codeEditorAppSettings", "Code Editor"))


def _idle_settings(resource: Resource, *path: str) -> dict[str, Any] | None:
    settings = resource.get(*path, "appLifecycleManagement", "idleSettings")
    return settings if isinstance(settings, dict) else None


def _idle_gaps(label: str, settings: dict[str, Any] | None) -> list[str]:
    if settings is None:
        return [f"{label} has no idle shutdown configured"]
    gaps = []
    if str(settings.get("lifecycleManagement", "")).upper() != "ENABLED":
        state = settings.get("lifecycleManagement") or "not set"
        gaps.append(f"{label} idle shutdown is {state}, not ENABLED")
    timeout = settings.get("idleTimeoutInMinutes")
    if timeout is None:
        gaps.append(f"{label} has no idle timeout (Studio's default is 7 days)")
    elif int(timeout) > MAX_IDLE_MINUTES:
        gaps.append(f"{label} idle timeout is {timeout} min, over {MAX_IDLE_MINUTES}")
    ceiling = settings.get("maxIdleTimeoutInMinutes")
    if ceiling is not None and int(ceiling) > MAX_IDLE_MINUTES:
        gaps.append(f"{label} users may raise their idle timeout to {ceiling} min")
    return gaps


def _domain_gaps(domain: Resource) -> tuple[list[str], str]:
    gaps: list[str] = []
    for block, app, label, required in _DOMAIN_APPS:
        if not required and domain.get(block, app) is None:
            continue  # No shared-space override: shared spaces follow Studio's own defaults.
        gaps += _idle_gaps(label, _idle_settings(domain, block, app))
    lab = _idle_settings(domain, "defaultUserSettings", "jupyterLabAppSettings") or {}
    summary = (
        f"JupyterLab and Code Editor stop after {lab.get('idleTimeoutInMinutes')} idle minutes"
    )
    if lab.get("maxIdleTimeoutInMinutes") is not None:
        summary += f"; users may choose at most {lab['maxIdleTimeoutInMinutes']}"
    return gaps, summary + "."


def _profile_gaps(profile: Resource) -> list[str]:
    gaps: list[str] = []
    for app, label in _PROFILE_APPS:
        settings = _idle_settings(profile, "userSettings", app)
        if settings is not None:  # Only overrides; otherwise the domain's settings apply.
            gaps += _idle_gaps(f"this profile's {label}", settings)
    return gaps


def _decode(script: object) -> str:
    if not isinstance(script, str):
        return ""
    try:
        return base64.b64decode(script, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return script  # Not base64: the script as written.


def _stops_when_idle(graph: StackGraph, instance: Resource) -> bool:
    name = instance.inputs.get("lifecycleConfigName")
    if not name:
        return False
    for config in graph.of_type(LIFECYCLE_CONFIG):
        if name not in (config.inputs.get("name"), config.outputs.get("name"), config.id):
            continue
        scripts = (config.inputs.get("onStart"), config.inputs.get("onCreate"))
        return any(_IDLE_STOP.search(_decode(script)) for script in scripts)
    return False


@rule(
    id="AIS-C5-01",
    checklist=["C5"],
    info="Notebooks shut down when idle: Studio idle shutdown on (<= 4 h), classic notebook "
    "instances only with an idle-stop lifecycle configuration.",
    why="A notebook bills every hour its instance runs, used or not; one GPU notebook left "
    "open over a weekend costs more than the work done in it all week. Studio can stop idle "
    "JupyterLab and Code Editor apps itself; classic notebook instances never stop on their "
    "own.",
    fix="Use aws.Notebook (Studio, idle shutdown on by default). For a hand-written Studio "
    "domain, set jupyterLabAppSettings and codeEditorAppSettings.appLifecycleManagement."
    "idleSettings {lifecycleManagement: ENABLED, idleTimeoutInMinutes <= 240, "
    "maxIdleTimeoutInMinutes <= 240} in defaultUserSettings (and in any profile that "
    "overrides them). For a classic notebook instance, use aws.Notebook (Studio) or attach an "
    "idle-stop lifecycle configuration (AWS's autostop.py sample) via lifecycleConfigName.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for domain in graph.of_type(DOMAIN):
        gaps, summary = _domain_gaps(domain)
        if gaps:
            yield fail(domain, "; ".join(gaps) + ".")
        else:
            yield ok(domain, summary)
    for profile in graph.of_type(USER_PROFILE):
        gaps = _profile_gaps(profile)
        if gaps:
            yield fail(profile, "; ".join(gaps) + ".")
    for instance in graph.of_type(NOTEBOOK_INSTANCE):
        if _stops_when_idle(graph, instance):
            yield ok(instance, "its lifecycle configuration stops the instance when idle.")
        else:
            yield fail(
                instance,
                "classic notebook instance with no idle-stop lifecycle configuration: it runs "
                "(and bills) until someone stops it.",
            )
