"""Every use the engine makes of the Pulumi SDK's private runtime, in one module, checked
when it is imported.

The engine runs programs against the SDK's mocks monitor, which `pulumi.runtime` does not
export, and replaces three of the runtime's private functions for the length of a run to
make it fast (`fast_runtime`). None of that is API: a Pulumi release may rename, move or
change any of it without notice. So the rest of the engine calls the named functions
here, never `pulumi.runtime`'s internals, and `check()` runs at import: when anything
relied on is missing or has changed shape, importing the engine fails with one error
naming what is missing, the installed SDK and the range this module supports, rather
than running programs on a runtime that only looks like the one it was written for.

Written and tested for pulumi 3.272.0 (`TESTED_WITH`); `SUPPORTED` is the range in
pyproject.toml. Older SDKs lack parts of it: pulumi 3.255's mocks monitor has no
`GetDeploymentInfo` (3.258's has), and 3.230's runtime tracks pending outputs in a deque,
not a set (3.250's in a set). To move to a newer SDK: change the bound in pyproject.toml
and `SUPPORTED` together, then run tests/engine (test_digest.py proves the recorded graphs
unchanged, test_pulumi_compat.py that this module still fits).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.metadata
import inspect
import logging
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from pulumi.runtime import configure
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import resource as _resource
from pulumi.runtime import settings as _settings
from pulumi.runtime import stack as _stack
from pulumi.runtime import sync_await as _sync_await_module
from pulumi.runtime.proto import source_pb2

from aistack.errors import AistackError

__all__ = [
    "SECRET_SIG",
    "SECRET_SIG_KEY",
    "SUPPORTED",
    "TESTED_WITH",
    "MocksMonitor",
    "UnsupportedPulumiError",
    "UntestedPulumiWarning",
    "check",
    "fast_runtime",
    "installed_version",
    "run_now",
    "use_monitor",
    "wait_for_rpcs",
]

T = TypeVar("T")

#: The SDK release this module was written against and the engine's tests passed on.
TESTED_WITH = "3.272.0"
#: The SDK releases the engine supports: pyproject.toml's bound on `pulumi`, which must
#: say the same (tests/engine/test_pulumi_compat.py).
SUPPORTED = ">=3.272,<3.273"
#: How Pulumi's wire format marks a secret value in recorded inputs: `{SECRET_SIG_KEY:
#: SECRET_SIG, "value": v}` (pulumi.runtime.rpc `_special_sig_key`, `_special_secret_sig`);
#: the queries that reveal secrets read it. Checked against the SDK below.
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


class UnsupportedPulumiError(AistackError, RuntimeError):
    """The installed Pulumi SDK lacks a private part of its runtime the engine relies on."""


class UntestedPulumiWarning(UserWarning):
    """The installed Pulumi SDK has what the engine relies on but is outside `SUPPORTED`."""


def installed_version() -> str:
    return importlib.metadata.version("pulumi")


def _parameters(*names: str) -> Callable[[Any], str | None]:
    """A check that a function still takes exactly these parameters (self excluded)."""

    def problem(value: Any) -> str | None:
        if not callable(value):
            return "is not callable"
        try:
            found = [p for p in inspect.signature(value).parameters if p != "self"]
        except (TypeError, ValueError):
            return None  # a builtin without a signature: existence is all we can check
        if found != list(names):
            return f"takes ({', '.join(found)}), expected ({', '.join(names)})"
        return None

    return problem


def _equals(expected: object) -> Callable[[Any], str | None]:
    def problem(value: Any) -> str | None:
        return None if value == expected else f"is {value!r}, expected {expected!r}"

    return problem


def _is(kind: type) -> Callable[[Any], str | None]:
    def problem(value: Any) -> str | None:
        if isinstance(value, kind):
            return None
        return f"is a {type(value).__name__}, expected a {kind.__name__}"

    return problem


def _reads_global(name: str) -> Callable[[Any], str | None]:
    """A check that a function looks `name` up in its module when it runs: replacing the
    module attribute then reaches it (`fast_runtime` relies on this)."""

    def problem(value: Any) -> str | None:
        code = getattr(value, "__code__", None)
        if code is not None and name in code.co_names:
            return None
        return f"no longer calls {name} through its module"

    return problem


def _records_registrations(monitor_class: Any) -> str | None:
    """A check that a mocks monitor keeps each registration's id and state by URN, in
    `resources` (`MocksMonitor.registered` reads it)."""
    try:
        resources = monitor_class(None).resources
    except Exception as error:  # any failure means the shape changed
        return f"no longer keeps its registrations in `resources` ({error!r})"
    registration = getattr(monitor_class, "ResourceRegistration", None)
    fields = set(getattr(registration, "_fields", ()))
    if not isinstance(resources, dict) or not {"id", "state"} <= fields:
        return "no longer keeps each registration's id and state in `resources`"
    return None


def _any(value: Any) -> str | None:
    return None


#: What the engine relies on: (module, dotted attribute, check of its value). An attribute
#: path into an instance (`SETTINGS.outputs`) is read from the module's object at check
#: time. Each entry is used below, where it says why.
_RELIED_ON: tuple[tuple[str, str, Callable[[Any], str | None]], ...] = (
    ("pulumi.runtime.stack", "wait_for_rpcs", _parameters("await_all_outstanding_tasks")),
    ("pulumi.runtime.rpc", "_special_sig_key", _equals(SECRET_SIG_KEY)),
    ("pulumi.runtime.rpc", "_special_secret_sig", _equals(SECRET_SIG)),
    ("pulumi.runtime.stack", "run_pulumi_func", _reads_global("wait_for_rpcs")),
    ("pulumi.runtime.resource", "_get_stack_trace", _parameters()),
    ("pulumi.runtime.proto.source_pb2", "StackTrace", _any),
    ("pulumi.runtime.mocks", "_sync_await", _parameters("awaitable")),
    ("pulumi.runtime.sync_await", "_sync_await", _parameters("awaitable")),
    ("pulumi.runtime.mocks", "MockMonitor", _is(type)),
    ("pulumi.runtime.mocks", "MockMonitor", _records_registrations),
    ("pulumi.runtime.mocks", "MockMonitor.make_urn", _parameters("parent", "type_", "name")),
    ("pulumi.runtime.mocks", "MockMonitor.GetDeploymentInfo", _parameters("request")),
    ("pulumi.runtime.mocks", "MockMonitor.RegisterResource", _parameters("request")),
    ("pulumi.runtime.mocks", "MockMonitor.RegisterResource", _reads_global("_sync_await")),
    ("pulumi.runtime.mocks", "MockSettings", _is(type)),
    ("pulumi.runtime.mocks", "MockEngine", _parameters("logger")),
    ("pulumi.runtime.settings", "_get_rpc_manager", _parameters()),
    ("pulumi.runtime.settings", "SETTINGS.outputs", _is(set)),
    ("pulumi.runtime.settings", "SETTINGS.lock", _any),
    ("pulumi.runtime.settings", "SETTINGS.rpc_manager.rpcs", _is(list)),
    ("pulumi.runtime.settings", "SETTINGS.rpc_manager.unhandled_exception", _any),
    ("pulumi.runtime.settings", "SETTINGS.rpc_manager.exception_traceback", _any),
)


def check() -> None:
    """Raise UnsupportedPulumiError naming every part of the SDK's private runtime the
    engine relies on that is missing or changed; warn when the SDK is outside SUPPORTED."""
    version = installed_version()
    problems = []
    for module_name, path, problem_of in _RELIED_ON:
        try:
            value: Any = importlib.import_module(module_name)
        except ImportError:
            problems.append(f"{module_name} is missing")
            continue
        found = True
        for part in path.split("."):
            if not hasattr(value, part):
                found = False
                break
            value = getattr(value, part)
        where = f"{module_name}.{path}"
        if not found:
            problems.append(f"{where} is missing")
        elif (problem := problem_of(value)) is not None:
            problems.append(f"{where} {problem}")
    if problems:
        # Several checks of one attribute report its absence once.
        problems = list(dict.fromkeys(problems))
        raise UnsupportedPulumiError(
            f"the installed Pulumi SDK (pulumi {version}) lacks what aistack's engine uses "
            f"of its private runtime: {'; '.join(problems)}. The engine supports pulumi "
            f"{SUPPORTED} (tested with {TESTED_WITH}): install a version in that range "
            "(`uv sync --locked`), or port aistack/engine/pulumi_compat.py to this one."
        )
    if not SpecifierSet(SUPPORTED).contains(Version(version), prereleases=True):
        warnings.warn(
            f"pulumi {version} is outside the range aistack's engine was tested with "
            f"({SUPPORTED}); its private runtime has what the engine uses, but recorded "
            "graphs may differ. Run tests/engine before relying on it.",
            UntestedPulumiWarning,
            stacklevel=2,
        )


# Before anything below reads a private attribute: a missing one should fail with the
# message above, not with an AttributeError from the middle of this module.
check()

_sync_await = _sync_await_module._sync_await


class MocksMonitor(_mocks.MockMonitor):
    """The SDK's mocks monitor (not exported by `pulumi.runtime`): what `pulumi.runtime.
    set_mocks` installs for unit tests, answering each registration and invoke from a
    `Mocks`. Subclasses override its gRPC methods (RegisterResource...) and read what it
    recorded through the methods below, not its attributes."""

    def urn_of(self, parent: str, type_: str, name: str) -> str:
        """The URN the monitor gives a registration of `type_` named `name` under `parent`."""
        return self.make_urn(parent, type_, name)

    def registered(self, urn: str) -> tuple[str, dict[str, Any]]:
        """The id and state the monitor answered for the resource at `urn`. (Not
        `get_registered_resources`, which copies the whole table on every call.)"""
        registration = self.resources[urn]
        return registration.id, registration.state

    def supported_features(self) -> set[int]:
        return set(self.GetDeploymentInfo(None).supportedFeatures)


def use_monitor(monitor: MocksMonitor, *, project: str, stack: str, logger: logging.Logger) -> None:
    """Point the runtime at `monitor`: what `pulumi.runtime.set_mocks` does, minus the empty
    root stack it registers for unit tests. The engine runs each program in its own stack
    (`run_in_stack`), so exports reach the monitor exactly once, as under the CLI."""
    configure(
        _mocks.MockSettings(
            monitor=monitor,
            monitor_features=monitor.supported_features(),
            engine=_mocks.MockEngine(logger),
            project=project,
            stack=stack,
            dry_run=False,
            organization=None,
            callbacks=None,
        )
    )


#: What a registration carries instead of the Python stack that created it (see below).
_NO_STACK_TRACE = source_pb2.StackTrace()


def _no_stack_trace() -> Any:
    return _NO_STACK_TRACE


def run_now(awaitable: Awaitable[T]) -> T:
    """What the mocks monitor's `_sync_await` does, for the monitor running on the loop's
    thread: it awaits `rpc.serialize_properties` of plain data, which finishes without
    suspending, so the coroutine is stepped to its end here. The SDK's helper would instead
    schedule it as a task and run the loop's other ready callbacks re-entrantly until it
    finished. Should the coroutine wait on a future (a value still pending), the SDK's
    helper waits for that future, and the coroutine goes on."""
    if not asyncio.iscoroutine(awaitable):
        return _sync_await(awaitable)
    while True:
        try:
            waited = awaitable.send(None)
        except StopIteration as finished:
            return finished.value
        if asyncio.isfuture(waited):
            _sync_await(waited)
            # As asyncio's Task does when it takes over a future the coroutine yielded:
            # this loop stands in for that task.
            waited._asyncio_future_blocking = False


async def wait_for_rpcs(await_all_outstanding_tasks: bool = True) -> None:
    """`pulumi.runtime.stack.wait_for_rpcs` in linear time: the same loop (drain the RPCs,
    then every tracked output, until neither gets new work), but it waits on each batch of
    pending outputs once, until all finish or one fails (FIRST_EXCEPTION), where Pulumi's
    waits FIRST_COMPLETED and so wakes and re-arms a callback on every pending output once
    per output that finishes: quadratic in outputs, most of the engine's time on a large
    stack. An output that fails still fails the run at once, with its own exception."""
    rpc_manager = _settings._get_rpc_manager()
    state = _settings.SETTINGS
    while True:
        while rpc_manager.rpcs:
            await asyncio.sleep(0)
            try:
                await rpc_manager.rpcs.pop()
            except Exception as error:
                if rpc_manager.unhandled_exception is not None:
                    cause = rpc_manager.unhandled_exception.with_traceback(
                        rpc_manager.exception_traceback
                    )
                    raise error from cause
                raise
        if rpc_manager.unhandled_exception is not None:
            raise rpc_manager.unhandled_exception.with_traceback(rpc_manager.exception_traceback)
        while await_all_outstanding_tasks:
            with state.lock:
                if not state.outputs:
                    break
                pending = list(state.outputs)
                state.outputs.clear()
            done, not_done = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                await task  # re-raises a failed output's exception here
            if not_done:
                with state.lock:
                    state.outputs.update(not_done)
        if not rpc_manager.rpcs:
            break


@contextlib.contextmanager
def fast_runtime() -> Iterator[None]:
    """Three of Pulumi's runtime functions replaced for the length of one run, then
    restored. None of it changes what the monitor receives except the source position,
    which the engine does not record:

    - `pulumi.runtime.stack.wait_for_rpcs` (looked up by `run_pulumi_func` when the program
      ends) by `wait_for_rpcs`, the same wait in linear time;
    - `pulumi.runtime.resource._get_stack_trace`, which walks and formats the whole Python
      stack on every registration (`traceback.extract_stack`) for the CLI to show where a
      resource was declared, by an empty trace: the simulated cloud records no source
      positions, and the SDK sends none when the trace is empty. The SDK has no setting
      that turns the capture off (3.272: `_get_stack_trace` is called unconditionally);
    - the mocks monitor's `_sync_await` by `run_now`: the engine runs the monitor on the
      loop's thread (runner._InlineExecutor), where the SDK's helper would pump the
      running loop.
    """
    saved = (
        _stack.wait_for_rpcs,
        _resource._get_stack_trace,
        _mocks._sync_await,  # type: ignore[attr-defined]
    )
    _stack.wait_for_rpcs = wait_for_rpcs  # type: ignore[assignment]
    _resource._get_stack_trace = _no_stack_trace
    _mocks._sync_await = run_now  # type: ignore[attr-defined]
    try:
        yield
    finally:
        (
            _stack.wait_for_rpcs,
            _resource._get_stack_trace,
            _mocks._sync_await,  # type: ignore[attr-defined]
        ) = saved
