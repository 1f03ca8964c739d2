"""`aistack scan`: checkov and the IAM check over a stack; exit 1 on anything unexplained.

Registered on the main app by `aistack/cli.py`; kept here so the scan's output is edited
in one place.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from aistack.errors import AistackError

__all__ = ["scan_command"]


class ScanFormat(StrEnum):
    text = "text"
    json = "json"


def scan_command(
    directory: Annotated[
        Path, typer.Argument(help="Pulumi project directory (holds Pulumi.yaml).")
    ] = Path("."),
    stack: Annotated[str, typer.Option("--stack", "-s", help="Stack whose config to use.")] = "dev",
    format: Annotated[ScanFormat, typer.Option("--format", "-f")] = ScanFormat.text,  # noqa: A002
    skips: Annotated[
        Path | None,
        typer.Option(help="Skip list (YAML); default: aistack's own, aistack/scan/skips.yaml."),
    ] = None,
    no_checkov: Annotated[
        bool, typer.Option("--no-checkov", help="Only the IAM check (no checkov needed).")
    ] = False,
) -> None:
    """Run checkov (the Terraform plan and the Kubernetes objects), the IAM database check
    and the Kubernetes schema check over the stack; exit 1 on any failed check the skip
    list does not explain."""
    from aistack import engine
    from aistack.scan import DEFAULT_SKIPS, scan

    try:
        graph = engine.run_project(directory, stack=stack)
        result = scan(graph, skips=skips or DEFAULT_SKIPS, checkov=not no_checkov)
    except AistackError as error:
        Console(stderr=True).print(f"[bold red]error:[/] {error}", highlight=False)
        raise typer.Exit(2) from None
    if format is ScanFormat.json:
        typer.echo(json.dumps(result.as_dict(), indent=2))
    else:
        _print(result)
    if not result.ok:
        raise typer.Exit(1)


def _print(result) -> None:
    console = Console(width=160)
    summary = result.as_dict()
    console.print(
        f"[bold]aistack scan[/] project [cyan]{result.project}[/] stack [cyan]{result.stack}[/]",
        highlight=False,
    )
    if result.checkov:
        console.print(
            f"checkov {result.checkov.version}: {result.checkov.resource_count} resources, "
            f"{result.checkov.passed} passed, {len(result.checkov.findings)} failed "
            f"({result.checkov.seconds:.1f} s)",
            highlight=False,
        )
    iam = summary["iam"]
    console.print(
        f"IAM ({iam['database']}): {iam['documents']} policy documents, {iam['failed']} findings",
        highlight=False,
    )
    if "gcp_iam" in summary:
        gcp = summary["gcp_iam"]
        console.print(
            f"Google IAM ({gcp['database']}): {gcp['grants']} grants, "
            f"{gcp['custom_roles']} custom roles, {gcp['failed']} findings",
            highlight=False,
        )
    if "kubernetes" in summary:
        kube = summary["kubernetes"]
        console.print(
            f"Kubernetes schemas ({', '.join(kube['versions'])} strict; kept CRDs): "
            f"{kube['builtin_objects']} objects, {kube['custom_resources']} custom resources, "
            f"{kube['failed']} findings",
            highlight=False,
        )
    triage = result.triage
    if triage.failed:
        console.print("[bold]Failed[/]")
    for finding in triage.failed:
        # One finding per line, the guideline on its own: URLs must not be cut to fit.
        console.print(
            f"  [red]✗ {finding.check_id}[/] {finding.resource} [dim]({finding.location})[/]: "
            f"{finding.title}",
            highlight=False,
            soft_wrap=True,
        )
        if finding.guideline:
            console.print(f"      {finding.guideline}", highlight=False, soft_wrap=True)
    if triage.pending:
        console.print(f"[yellow]{len(triage.pending)} pending[/] (fixes on their way):")
        for finding, entry in triage.pending:
            console.print(
                f"  {finding.check_id} {finding.resource} (defect {entry.defect})", highlight=False
            )
    console.print(f"[dim]{len(triage.skipped)} skipped with a reason in the skip list[/]")
    if triage.failed:
        console.print(
            f"[bold red]{len(triage.failed)} failed[/]: fix them, or add a skip with its "
            "reason (docs/scan.md)."
        )
    else:
        console.print("[bold green]no unexplained findings[/]")
