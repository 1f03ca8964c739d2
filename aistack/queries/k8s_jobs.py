"""How the job template rules (D3, D4, E1, T1, T2 on Kubernetes) read their templates: each
Job or JobSet kept in a ConfigMap, named for the finding on its ConfigMap, with the
problems a rule finds in it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries.k8s import JobTemplate, job_templates

__all__ = ["JudgedTemplate", "judged_templates"]


@dataclass(frozen=True)
class JudgedTemplate:
    """One job template and what a rule found wrong with it (nothing: it passes)."""

    template: JobTemplate
    problems: list[str]

    @property
    def config_map(self) -> Resource:
        """The ConfigMap holding the template: the resource a finding is about."""
        return self.template.config_map

    @property
    def where(self) -> str:
        """`Job template 'train' (job.yaml)`: the template, as a finding names it."""
        return f"{self.template.kind} template {self.template.name!r} ({self.template.key})"

    @property
    def failure(self) -> str:
        """`<where>: <problem>; <problem>.`"""
        return f"{self.where}: " + "; ".join(self.problems) + "."


def judged_templates(
    graph: StackGraph, problems_of: Callable[[dict[str, Any]], list[str]]
) -> Iterator[JudgedTemplate]:
    """Every job template of the graph with its problems as `problems_of` finds them."""
    for template in job_templates(graph):
        yield JudgedTemplate(template, problems_of(template.document))
