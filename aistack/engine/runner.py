"""Run a Pulumi program in-process against the simulated cloud and record what it does.

Each run is isolated: a fresh event loop, freshly reset Pulumi settings, its own config
and its own monitor, so one run never sees another's resources or config.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import json
import logging
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pulumi
from google.protobuf import empty_pb2
from pulumi.runtime import (
    MockCallArgs,
    MockResourceArgs,
    Mocks,
    reset_options,
    rpc,
    run_in_stack,
    set_all_config,
)

from aistack.engine import gcp_cloud, pulumi_compat
from aistack.engine.cloud import SimulatedCloud
from aistack.engine.context import Existing
from aistack.engine.graph import Resource, StackGraph
from aistack.errors import ConfigError, EngineError

__all__ = ["run", "run_project", "load_stack_config", "read_project"]

Program = Callable[[], Any]
T = TypeVar("T")


def normalise(value: Any) -> Any:
    """Plain data, as a provider would see it: protobuf carries every number as a float
    (whole numbers back to ints), and assets become a description of what they hold."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, pulumi.asset.AssetArchive):
        return {"archive": {name: normalise(item) for name, item in value.assets.items()}}
    if isinstance(value, pulumi.asset.FileAsset | pulumi.asset.FileArchive):
        return {"path": str(value.path)}
    if isinstance(value, pulumi.asset.StringAsset):
        return {"text": value.text}
    if isinstance(value, pulumi.asset.RemoteAsset | pulumi.asset.RemoteArchive):
        return {"uri": value.uri}
    if isinstance(value, dict):
        return {key: normalise(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [normalise(item) for item in value]
    return value


class _SeenInputs(Mocks):
    """The simulated cloud, keeping the inputs the mocks monitor deserialised for the
    registration it is making: the recorder reuses them rather than decoding the same
    request a second time. (Registrations are made one at a time: `_InlineExecutor`.)"""

    def __init__(self, cloud: SimulatedCloud) -> None:
        self.cloud = cloud
        self.inputs: dict[str, Any] = {}

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict]:
        self.inputs = args.inputs
        return self.cloud.new_resource(args)

    def call(self, args: MockCallArgs) -> Any:
        return self.cloud.call(args)


class RecordingMonitor(pulumi_compat.MocksMonitor):
    """The mocks monitor, plus a record of every registration's tree and DAG edges."""

    def __init__(self, cloud: SimulatedCloud) -> None:
        self.seen = _SeenInputs(cloud)
        super().__init__(self.seen)
        self.cloud = cloud
        self.records: list[Resource] = []
        self.api_race = gcp_cloud.ApiRaceCheck()
        self.outputs_by_urn: dict[str, dict[str, Any]] = {}
        self.root_urn = ""
        #: What the Pulumi engine would have refused; the run fails with the first.
        self.engine_errors: list[str] = []
        self.seen_urns: set[str] = set()

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        urn = self.urn_of(request.parent, request.type, request.name)
        duplicate = urn in self.seen_urns
        self.seen_urns.add(urn)
        if duplicate:
            # The Pulumi engine refuses the second registration and fails the deployment;
            # a simulated run that accepted it would pass tests of a stack that cannot deploy.
            # Message as pkg/resource/deploy/step_generator.go gives it. Recorded, not raised
            # here: the run fails with it once the program returns, without asyncio noise.
            self.engine_errors.append(
                f"Duplicate resource URN '{urn}'; try giving it a unique name"
            )
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            self.root_urn = response.urn
            return response
        # What the mocks monitor decoded from request.object and handed to the cloud
        # (which copies before it changes anything).
        inputs = normalise(self.seen.inputs)
        if request.type.startswith("pulumi:providers:"):
            # Resources refer to their provider as "urn::id"; remembering its inputs lets
            # invokes and ARNs use the provider's region and project.
            self.cloud.providers[f"{response.urn}::{response.id}"] = inputs
        resource_id, state = self.registered(response.urn)
        record = Resource(
            type=request.type,
            name=request.name,
            urn=response.urn,
            parent=request.parent or None,
            dependencies=tuple(dict.fromkeys(request.dependencies)),
            inputs=inputs,
            outputs=normalise(dict(state)),
            custom=bool(request.custom),
            id=resource_id or "",
            provider=request.provider,
            protect=bool(request.protect),
            retain_on_delete=bool(request.retainOnDelete),
            import_id=request.importId,
            ignore_changes=tuple(request.ignoreChanges),
            property_dependencies={
                key: tuple(deps.urns) for key, deps in request.propertyDependencies.items()
            },
        )
        self.records.append(record)
        race = self.api_race.error_for(record)
        if race:
            self.engine_errors.append(race)
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        outputs = rpc.deserialize_properties(request.outputs)
        self.outputs_by_urn[request.urn] = normalise(dict(outputs))
        return empty_pb2.Empty()


#: What a `secure:` value becomes offline: the ciphertext is never handed to the program.
SECRET_PLACEHOLDER = "aistack-offline-secret"


def _config_map(project: str, config: Mapping[str, Any] | None) -> tuple[dict[str, str], list[str]]:
    """Pulumi's flat config map (namespaced keys, structured values as JSON strings) and
    the keys holding secrets. A `secure:` value, at the top or nested in an object, is
    replaced by a marked placeholder: the CLI would decrypt it, and ciphertext must not
    reach the program (it would end up in tags and names)."""
    flat: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in (config or {}).items():
        full_key = key if ":" in key else f"{project}:{key}"
        value, had_secret = _without_ciphertext(value, full_key)
        if had_secret:
            secret_keys.append(full_key)
        flat[full_key] = value if isinstance(value, str) else json.dumps(value)
    return flat, secret_keys


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and list(value) == ["secure"]


def _without_ciphertext(value: Any, path: str) -> tuple[Any, bool]:
    if _is_secure(value):
        return f"{SECRET_PLACEHOLDER}:{path}", True
    if isinstance(value, dict):
        pairs = {key: _without_ciphertext(item, f"{path}.{key}") for key, item in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(s for _, s in pairs.values())
    if isinstance(value, list):
        items = [_without_ciphertext(item, f"{path}[{i}]") for i, item in enumerate(value)]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def _config_problem(error: Exception, source: str) -> ConfigError | None:
    """Pulumi's config errors as one ConfigError naming the stack file and the fix."""
    from pulumi.config import ConfigMissingError, ConfigTypeError

    if isinstance(error, ConfigMissingError):
        return ConfigError(
            f"required configuration is missing from {source}.",
            field=error.key,
            fix=f"add `{error.key}: <value>` under `config:` in {source} "
            f"(or `pulumi config set {error.key} <value>`).",
        )
    if isinstance(error, ConfigTypeError):
        expected = {
            "JSON object": "a structured value (a mapping or a list)",
            "int": "a whole number",
            "float": "a number",
            "bool": "true or false",
        }.get(error.expect_type, error.expect_type)
        shown = error.value if len(error.value) <= 60 else error.value[:57] + "..."
        fix = f"write {expected} for `{error.key}` in {source}"
        if error.expect_type == "JSON object":
            fix += " (a list is `[a, b]` or one `- item` per line; a mapping is `key: value` lines)"
        return ConfigError(f"expected {expected}, got {shown!r}.", field=error.key, fix=fix + ".")
    return None


def run(
    program: Program,
    *,
    config: Mapping[str, Any] | None = None,
    project: str = "aistack",
    stack: str = "dev",
    config_source: str = "the stack's config",
    existing: Existing | None = None,
) -> StackGraph:
    """Run `program` (a function that declares resources) and return what it registered.

    `config` keys without a namespace belong to `project`; structured values (dicts,
    lists) are passed the way the Pulumi CLI passes them, as JSON. `secure:` values become
    a placeholder marked as secret (`StackGraph.notes` says which). `config_source` names
    where the config came from in error messages. `existing`: what the simulated account
    already holds (engine.context.Existing), for a run after earlier deployments.
    """
    flat_config, secret_keys = _config_map(project, config)
    cloud = SimulatedCloud(flat_config, existing)
    monitor = RecordingMonitor(cloud)
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_unretrieved)
    loop.set_default_executor(_InlineExecutor())
    asyncio.set_event_loop(loop)
    try:
        reset_options(project=project, stack=stack, preview=False)
        set_all_config(flat_config, secret_keys)
        pulumi_compat.use_monitor(monitor, project=project, stack=stack, logger=_quiet_logger())
        try:
            with _lean_runtime():
                loop.run_until_complete(run_in_stack(program))
        except Exception as error:
            if monitor.engine_errors:
                raise EngineError(monitor.engine_errors[0]) from None
            problem = _config_problem(error, config_source)
            if problem is not None:
                raise problem from None
            raise
        if monitor.engine_errors:
            raise EngineError(monitor.engine_errors[0])
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        asyncio.set_event_loop(None)
        reset_options()
        set_all_config({}, [])
    return StackGraph(
        project=project,
        stack=stack,
        resources=list(monitor.records),
        stack_outputs=monitor.outputs_by_urn.get(monitor.root_urn, {}),
        config=flat_config,
        root_urn=monitor.root_urn,
        notes=(
            (
                f"secret config ({', '.join(secret_keys)}) replaced by offline placeholders "
                f"('{SECRET_PLACEHOLDER}:<key>'); `pulumi up` decrypts the real values.",
            )
            if secret_keys
            else ()
        ),
        registered_outputs={
            urn: outputs
            for urn, outputs in monitor.outputs_by_urn.items()
            if urn != monitor.root_urn
        },
    )


#: A full-collection threshold no run reaches (it counts young-generation collections).
_NEVER = 10**9


class _InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """The run loop's default executor: each call runs at once on the loop's own thread.

    The SDK hands every monitor call (register, invoke, read) to `run_in_executor`, for a
    gRPC round trip that must not block the loop. The simulated monitor answers in
    microseconds, and on a thread pool each call paid a hand-off between threads that
    contend for the GIL, plus an event loop of the worker thread's own for the mocks
    monitor's `_sync_await`: about two fifths of a run's CPU. Run inline, the calls are
    made one at a time in the order the loop reaches them (the monitor's `_sync_await`
    becomes `pulumi_compat.run_now` for it); what each records is the same
    (tests/engine/test_digest.py). A subclass of ThreadPoolExecutor only because asyncio
    accepts no other default executor; it never starts a thread."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        try:
            result = fn(*args, **kwargs)
        except Exception as error:  # the caller's await raises it, as from a worker thread
            future.set_exception(error)
        else:
            future.set_result(result)
        return future


@contextlib.contextmanager
def _lean_runtime() -> Iterator[None]:
    """For the length of one run, then restored: the garbage collector's full passes
    postponed, and Pulumi's runtime on its fast paths (`pulumi_compat.fast_runtime`, which
    says why each). Neither changes what the monitor receives except the source position,
    which it does not record.

    The collector's oldest-generation passes are postponed to the end of the run: a run
    keeps every resource's pending outputs, futures and tasks alive until the program ends,
    and each full pass walks all of them, so the passes cost more the larger the stack
    (quadratic: 1,000 repetitions of a component took 33 s, 15 s of them in full passes).
    The young generations are still collected, so the cyclic garbage a run makes (Pulumi's
    `contains_unknowns` closures, mostly) is freed as it goes.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], _NEVER)
    try:
        with pulumi_compat.fast_runtime():
            yield
    finally:
        gc.set_threshold(*thresholds)


def _unretrieved(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """What a run's loop does with "Future exception was never retrieved": a failed run
    leaves such futures behind, and the run has already raised its error. asyncio's default
    handler formats their tracebacks, and on Python 3.11 that formatting calls `ast.parse`
    (caret anchors); run from a garbage collector finalizer in the middle of another
    `ast.parse` it corrupts the parser's shared recursion counter ("SystemError: AST
    constructor recursion depth mismatch"). Logged in one line, without a traceback."""
    _quiet_logger().debug("%s: %r", context.get("message"), context.get("exception"))


def _quiet_logger() -> logging.Logger:
    logger = logging.getLogger("aistack.engine.pulumi")
    logger.setLevel(logging.WARNING)
    return logger


def _yaml_document(path: Path) -> Any:
    """A YAML file parsed, or a ConfigError naming the file, the line and the fix."""
    import yaml

    text = path.read_text()
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        hint = " YAML indents with spaces, never tabs." if "\t" in text else ""
        raise ConfigError(
            f"is not valid YAML ({problem}{where}).",
            field=path.name,
            fix=f"correct {path}{where and ' at' + where}.{hint}",
        ) from None


def read_project(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The project directory and its parsed `Pulumi.yaml`."""
    directory = Path(path).resolve()
    if directory.is_file():
        directory = directory.parent
    project_file = directory / "Pulumi.yaml"
    if not project_file.exists():
        raise ConfigError(
            f"no Pulumi.yaml in {directory}",
            field="path",
            fix="point at a Pulumi project directory (one holding Pulumi.yaml).",
        )
    document = _yaml_document(project_file)
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ConfigError(
            f"must be a mapping of keys (name, runtime, main), not a {_kind(document)}.",
            field="Pulumi.yaml",
            fix=f"write `name: <project>` and `runtime: python` lines in {project_file}.",
        )
    name = document.get("name")
    if name is not None and not (isinstance(name, str) and name):
        raise ConfigError(
            f"`name` must be the project's name as text, not {name!r}.",
            field="Pulumi.yaml name",
            fix=f"write `name: my-project` in {project_file}.",
        )
    return directory, document


def _kind(value: Any) -> str:
    return {list: "list", str: "text", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


def load_stack_config(directory: Path, project: str, stack: str) -> dict[str, Any]:
    """The `config:` block of `Pulumi.<stack>.yaml`, values kept structured.

    A missing file is an error when the project has other stack files (the stack name is
    most likely mistyped); a project without any stack file runs with empty config, as
    under the Pulumi CLI.
    """
    stack_file = directory / f"Pulumi.{stack}.yaml"
    if not stack_file.exists():
        others = sorted(
            p.name.removeprefix("Pulumi.").removesuffix(".yaml")
            for p in directory.glob("Pulumi.*.yaml")
        )
        if others:
            raise ConfigError(
                f"there is no {stack_file.name} in {directory} (stacks here: {', '.join(others)}).",
                field="--stack",
                fix=f"pass --stack {others[0]}, or create {stack_file.name} with a "
                "`config:` block.",
            )
        return {}
    document = _yaml_document(stack_file)
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(
            f"must be a mapping with a `config:` key, not a {_kind(document)}.",
            field=stack_file.name,
            fix=f"start {stack_file} with `config:` and indent one `key: value` per line.",
        )
    config = document.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ConfigError(
            f"`config:` must be a mapping of keys to values, not a {_kind(config)}.",
            field=f"{stack_file.name} config",
            fix="write `aistack:key: value` lines under `config:` (no leading `- `).",
        )
    return {
        str(key) if ":" in str(key) else f"{project}:{key}": value for key, value in config.items()
    }


def run_project(
    path: str | Path, stack: str = "dev", *, existing: Existing | None = None
) -> StackGraph:
    """Run the Pulumi project at `path` (honouring `main:`) with `Pulumi.<stack>.yaml`,
    against a simulated account that holds `existing` (empty: a fresh one)."""
    directory, project_doc = read_project(path)
    project = str(project_doc.get("name") or directory.name)
    main = directory / str(project_doc.get("main") or ".")
    entry = main / "__main__.py" if main.is_dir() else main
    if not entry.exists():
        raise ConfigError(
            f"the project's program {entry} does not exist",
            field="Pulumi.yaml main",
            fix="set `main:` to the directory holding __main__.py.",
        )
    config = load_stack_config(directory, project, stack)
    with _on_sys_path(entry.parent):
        return run(
            lambda: runpy.run_path(str(entry), run_name="__main__"),
            config=config,
            project=project,
            stack=stack,
            config_source=f"Pulumi.{stack}.yaml",
            existing=existing,
        )


@contextlib.contextmanager
def _on_sys_path(directory: Path) -> Iterator[None]:
    sys.path.insert(0, str(directory))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(directory))
