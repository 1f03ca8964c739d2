"""`aistack`: preview, check and cost a stack offline; browse the GPU catalog.

Every command runs the stack program under the simulated cloud (nothing is deployed, no
credentials are needed). Exit codes: 0 clean; 1 findings (`preview` and `check` when a
mandatory rule fails, `scan` on an unexplained failed check); 2 bad input (one message).
Text output is as wide as the terminal, or `COLUMNS`, or 140 columns when written to a
file or a pipe; colour only on a terminal, never with `NO_COLOR` set (rich honours both).
"""

from __future__ import annotations

import gc
import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.table import Table
from rich.tree import Tree

from aistack.errors import AistackError

app = typer.Typer(
    help="Preview, check and cost aistack stacks offline, and browse the GPU catalog.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _print_version(asked: bool) -> None:
    if asked:
        from aistack import __version__

        typer.echo(f"aistack {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print aistack's version and exit.",
        ),
    ] = False,
) -> None:
    """Preview, check and cost aistack stacks offline, and browse the GPU catalog."""
    global console
    console = _new_console()


catalog_app = typer.Typer(help="GPU offers per cloud and region.", no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")

#: Logs and pipes get 140 columns: rich's own default there is 80, which wraps the tables.
_FILE_WIDTH = 140


def _new_console() -> Console:
    """The terminal's width or COLUMNS (rich reads both), else 140 columns; made for each
    command, when its output stream and environment are known."""
    width = None if os.environ.get("COLUMNS") or sys.stdout.isatty() else _FILE_WIDTH
    return Console(width=width)


console = _new_console()


class PreviewFormat(StrEnum):
    text = "text"
    json = "json"
    mermaid = "mermaid"


class CheckFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


class CostFormat(StrEnum):
    text = "text"
    json = "json"


DirArg = Annotated[Path, typer.Argument(help="Pulumi project directory (holds Pulumi.yaml).")]
StackOpt = Annotated[str, typer.Option("--stack", "-s", help="Stack whose config to use.")]


def _fail(error: Exception) -> typer.Exit:
    # Plain text: a message holds YAML (`[a, b]`, `aws:region:`) that rich would read as
    # markup or emoji codes, and wrapping would split it over lines.
    typer.echo(f"error: {error}", err=True)
    return typer.Exit(2)


def _run(directory: Path, stack: str):
    from aistack import engine
    from aistack._extras import missing_extra

    try:
        graph = engine.run_project(directory, stack=stack)
    except ModuleNotFoundError as error:
        # A program that imports a component module directly meets the bare SDK error.
        friendly = missing_extra(error, f"the program in {directory}")
        if friendly is None:
            raise
        raise friendly from None
    for note in graph.notes:
        typer.echo(f"note: {note}", err=True)
    return graph


@app.command()
def preview(
    directory: DirArg = Path("."),
    stack: StackOpt = "dev",
    format: Annotated[PreviewFormat, typer.Option("--format", "-f")] = PreviewFormat.text,  # noqa: A002
    details: Annotated[
        bool, typer.Option("--details", help="Every resource with its key settings.")
    ] = False,
) -> None:
    """Show what the stack would create, its checklist score, its monthly cost and the next
    steps (the component tree by default; every resource with --details). Exit 1 when a
    mandatory rule fails."""
    from aistack import cost, policy, report

    try:
        graph = _run(directory, stack)
        if format is PreviewFormat.mermaid:
            typer.echo(report.mermaid(graph), nl=False)
            return
        findings = policy.evaluate(graph)
        estimate = cost.estimate(graph)
    except AistackError as error:
        raise _fail(error) from None
    if format is PreviewFormat.json:
        typer.echo(
            json.dumps(report.preview_json(graph, findings, estimate), indent=2, sort_keys=True)
        )
        if findings.mandatory_violations:
            raise typer.Exit(1)
        return
    console.print(
        f"[bold]aistack preview[/] project [cyan]{graph.project}[/] stack [cyan]{graph.stack}[/]"
        " (simulated cloud: nothing is deployed)"
    )
    console.print(_tree(graph) if details else _component_tree(graph))
    types = {resource.type for resource in graph.resources}
    components = sum(1 for r in graph.resources if r.type.startswith("aistack:"))
    console.print(
        f"\n[bold]{len(graph.resources)}[/] resources ({components} aistack components, "
        f"{len(types)} types)" + ("" if details else "; every resource: --details")
    )
    _print_checklist_summary(findings)
    _print_cost(estimate)
    if graph.stack_outputs:
        console.print("\n[bold]Next steps[/] (stack outputs)")
        for key, value in sorted(graph.stack_outputs.items()):
            text = value if isinstance(value, str) else json.dumps(value)
            # Printed whole, never cut: a truncated ARN or command is worse than a long line.
            typer.echo(f"  {key}: {text}")
    if findings.mandatory_violations:
        raise typer.Exit(1)


def _component_tree(graph) -> Tree:
    """Components only, each with how many resources it holds and how many are retained."""
    root = Tree(f"[bold]{graph.project}-{graph.stack}[/]")

    def held(component) -> list:
        found = []
        for child in graph.children(component):
            if not child.type.startswith("aistack:"):
                found.append(child)
                found.extend(held(child))
        return found

    def add(node: Tree, resources) -> None:
        for resource in sorted(resources, key=lambda r: (r.type, r.name)):
            if not resource.type.startswith("aistack:"):
                continue
            own = held(resource)
            retained = sum(1 for r in own if r.protect or r.retain_on_delete)
            kinds = sorted({r.type.rsplit(":", 1)[-1] for r in own})
            shown = ", ".join(kinds[:5]) + (", ..." if len(kinds) > 5 else "")
            label = (
                f"[bold magenta]{resource.name}[/] "
                f"[dim]{resource.type.removeprefix('aistack:index:')}[/]  {len(own)} resources"
                + (f", [yellow]{retained} retained[/]" if retained else "")
                + f"  [dim]{shown}[/]"
            )
            add(node.add(label, highlight=False), graph.children(resource))

    add(root, graph.roots())
    for resource in sorted(graph.roots(), key=lambda r: (r.type, r.name)):
        # Resources a program declares itself, outside any component, listed as they are.
        if not resource.type.startswith(("aistack:", "pulumi:providers:")):
            root.add(f"[green]{resource.name}[/] [dim]{resource.type}[/]", highlight=False)
    return root


def _tree(graph) -> Tree:
    from aistack import report

    root = Tree(f"[bold]{graph.project}-{graph.stack}[/]")

    def add(node: Tree, resources) -> None:
        # Registration order depends on thread timing; sort siblings so output is stable.
        for resource in sorted(resources, key=lambda r: (not r.is_component, r.type, r.name)):
            style = "bold magenta" if resource.type.startswith("aistack:") else "green"
            kept = resource.protect or resource.retain_on_delete
            flags = " [yellow](retained)[/]" if kept else ""
            settings = report.key_settings(resource)
            label = f"[{style}]{resource.name}[/] [dim]{resource.type}[/]{flags}"
            if settings:
                label += f"  [dim]{settings}[/]"
            add(node.add(label, highlight=False), graph.children(resource))

    add(root, graph.roots())
    return root


def _print_checklist_summary(findings) -> None:
    good, total = findings.score()
    mandatory = {id(f) for f in findings.mandatory_violations}
    failures = [f for f in findings.violations if id(f) in mandatory]
    advisories = [f for f in findings.violations if id(f) not in mandatory]
    console.print(
        f"\n[bold]Checklist[/] {good}/{total} items passing, documented or the cloud's; "
        f"{len(failures)} failing, {len(advisories)} advisory"
    )
    marked = [(f, "[red]✗ failing[/]") for f in failures]
    marked += [(f, "[yellow]! advisory[/]") for f in advisories]
    for finding, mark in marked:
        where = finding.resource_name or "(stack)"
        console.print(
            f"  {mark} {finding.rule_id} {where}: {finding.message} [dim]Fix: {finding.fix}[/]",
            highlight=False,
        )
    others = [i.id for i in findings.items() if i.state in ("no-rule", "not-applicable")]
    if others:
        console.print(f"  [dim]not covered by this stack: {', '.join(others)}[/]")


def _print_cost(estimate) -> None:
    assumed = " (assumed: no aistack:workload in config)" if estimate.workload_assumed else ""
    table = Table(
        title=f"Monthly cost (USD) for the stated workload{assumed}", title_justify="left"
    )
    table.add_column("component")
    table.add_column("aistack", justify="right")
    table.add_column("naive baseline", justify="right")
    for component, (ours, naive) in sorted(estimate.by_component().items()):
        table.add_row(component, f"{ours:,.2f}", f"{naive:,.2f}")
    table.add_row(
        "[bold]total[/]", f"[bold]{estimate.total:,.2f}[/]", f"[bold]{estimate.naive_total:,.2f}[/]"
    )
    console.print()
    console.print(table)
    if estimate.total:
        console.print(f"Naive baseline costs {estimate.ratio}x aistack's estimate.")


@app.command()
def check(
    directory: DirArg = Path("."),
    stack: StackOpt = "dev",
    format: Annotated[CheckFormat, typer.Option("--format", "-f")] = CheckFormat.text,  # noqa: A002
) -> None:
    """Evaluate every checklist rule; exit 1 on any mandatory violation."""
    from aistack import policy, report

    try:
        findings = policy.evaluate(_run(directory, stack))
    except AistackError as error:
        raise _fail(error) from None
    if format is CheckFormat.json:
        typer.echo(json.dumps(report.checklist_json(findings), indent=2, sort_keys=True))
    elif format is CheckFormat.markdown:
        typer.echo(report.checklist_markdown(findings), nl=False)
    else:
        table = Table("ID", "item", "state", "rules", "detail")
        for item in findings.items():
            failures = [f for f in item.findings if f.failed]
            detail = (
                "\n".join(f"{f.resource_name}: {f.message} Fix: {f.fix}" for f in failures)
                or item.note
            )
            colour = {"passing": "green", "failing": "red"}.get(item.state, "dim")
            table.add_row(
                item.id, item.title, f"[{colour}]{item.state}[/]", "\n".join(item.rules), detail
            )
        console.print(table)
        good, total = findings.score()
        console.print(f"{good}/{total} items passing, documented or the cloud's")
    if findings.mandatory_violations:
        raise typer.Exit(1)


@app.command()
def cost(
    directory: DirArg = Path("."),
    stack: StackOpt = "dev",
    format: Annotated[CostFormat, typer.Option("--format", "-f")] = CostFormat.text,  # noqa: A002
) -> None:
    """Monthly cost per component against a naive baseline doing the same work."""
    from aistack import cost as cost_model

    try:
        estimate = cost_model.estimate(_run(directory, stack))
    except AistackError as error:
        raise _fail(error) from None
    if format is CostFormat.json:
        typer.echo(json.dumps(estimate.as_dict(), indent=2, sort_keys=True))
        return
    source = (
        "assumed defaults: no aistack:workload in config"
        if estimate.workload_assumed
        else estimate.workload_source
    )
    console.print(f"[bold]Workload[/] ({source})", highlight=False)
    for key, value in estimate.profile.model_dump(by_alias=True).items():
        console.print(f"  {key}: {value:,g}", highlight=False)
    table = Table("component / resource", "aistack", "naive", "basis")
    by_component: dict[str, list] = {}
    for item in estimate.items:
        by_component.setdefault(item.component, []).append(item)
    subtotals = estimate.by_component()
    for component in sorted(by_component):
        ours, naive = subtotals[component]
        table.add_row(f"[bold]{component}[/]", f"[bold]{ours:,.2f}[/]", f"[bold]{naive:,.2f}[/]")
        for item in by_component[component]:
            table.add_row(
                f"  {item.resource}",
                f"{item.monthly_usd:,.2f}",
                f"{item.naive_monthly_usd:,.2f}",
                item.basis,
            )
    table.add_row(
        "[bold]total[/]", f"[bold]{estimate.total:,.2f}[/]", f"[bold]{estimate.naive_total:,.2f}[/]"
    )
    console.print(table)
    if estimate.total:
        console.print(f"Naive baseline costs {estimate.ratio}x aistack's estimate.")


@catalog_app.command("gpus")
def catalog_gpus(
    gpu: Annotated[str | None, typer.Option(help="GPU model, e.g. H100.")] = None,
    cloud: Annotated[str | None, typer.Option(help="aws or gcp.")] = None,
) -> None:
    """Instance types with GPUs, their shape and cheapest listed price."""
    from aistack import catalog

    try:
        offers = catalog.instance_types(cast("catalog.Cloud | None", cloud), gpu=gpu)
    except AistackError as error:
        # The nearest known GPUs are in the message; the command that lists them all too.
        typer.echo(f"error: {error}\nList them all: aistack catalog gpus", err=True)
        raise typer.Exit(2) from None
    table = Table(
        "type", "cloud", "GPUs", "GPU mem (GB)", "vCPUs", "mem (GiB)", "NVMe", "from $/h", "regions"
    )
    for offer in offers:
        cheapest = min(price.usd_per_hour for price in offer.prices.values())
        table.add_row(
            offer.name,
            offer.cloud,
            f"{offer.gpu_count} x {offer.gpu_model}",
            str(offer.total_gpu_memory_gb),
            str(offer.vcpus),
            str(offer.memory_gib),
            f"{offer.nvme_disks} x {offer.nvme_disk_gb} GB" if offer.nvme_disks else "-",
            f"{cheapest:,.2f}",
            str(len(offer.regions)),
        )
    console.print(table)


@catalog_app.command("regions")
def catalog_regions(
    gpu: Annotated[str, typer.Option(help="GPU model, e.g. H100.")],
    cloud: Annotated[str, typer.Option(help="aws or gcp.")] = "aws",
    count: Annotated[int, typer.Option(help="GPUs per node.")] = 1,
    allowed: Annotated[list[str] | None, typer.Option(help="Allowed region (repeat).")] = None,
) -> None:
    """Rank regions for a GPU by availability, residency and price (checklist C2)."""
    from aistack import catalog

    try:
        choice = catalog.choose_region(
            gpu, allowed_regions=allowed, cloud=cast("catalog.Cloud", cloud), gpu_count=count
        )
    except AistackError as error:
        raise _fail(error) from None
    table = Table("rank", "region", "instance type", "$/GPU-hour", "why")
    for rank, candidate in enumerate(choice.candidates, start=1):
        table.add_row(
            str(rank),
            candidate.region,
            candidate.instance_type,
            f"{candidate.price_per_gpu_hour:,.2f}",
            candidate.reason,
        )
    console.print(table)
    for rejected in choice.rejected:
        console.print(f"  [dim]{rejected.region}: {rejected.reason}[/]")
    console.print(f"Chosen: [bold]{choice.region}[/] ({choice.instance_type.name})")


from aistack.scan.cli import scan_command  # noqa: E402 - the scan lives in its own module

app.command("scan")(scan_command)


#: A threshold for the collector's oldest generation that no command reaches.
_NO_FULL_COLLECTIONS = 10**9


def main(args: list[str] | None = None) -> None:
    """The `aistack` console script: one command, run once, then the process exits.

    The garbage collector stays out of the way of a process that ends with its command
    (its young generations still collect as usual):

    - its full passes are switched off: a command runs one stack, and each pass walks every
      object the SDK's modules and the recorded graph hold to free only the run's own
      garbage, moments before the process frees it all. The engine already postpones them
      while a program runs (engine.runner._lean_runtime), so a run's peak memory is the
      same; in-process callers (tests, programs importing `app`) keep their own settings;
    - when the command ends, everything is frozen (`gc.freeze`): Python's exit collects
      once more, over every object, unless they are in the permanent generation.

    Together they are a quarter of a small stack's preview (`make bench`: 3.0 s of CPU
    down to 2.2 s for minimal-training)."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _NO_FULL_COLLECTIONS)
    try:
        app(args)
    finally:
        gc.freeze()
