"""How the job template rules judge: each Job or JobSet kept in a ConfigMap, one finding on
the ConfigMap, its problems listed (a module with a leading underscore holds no rule)."""

from collections.abc import Callable, Iterator
from typing import Any

from aistack.policy import fail, ok
from aistack.queries.k8s import job_templates


def judge_templates(
    graph: Any, problems_of: Callable[[dict[str, Any]], list[str]], passing: str
) -> Iterator[Any]:
    """Fail each template with its problems, or pass it saying `passing`."""
    for template in job_templates(graph):
        where = f"{template.kind} template {template.name!r} ({template.key})"
        problems = problems_of(template.document)
        if problems:
            yield fail(template.config_map, f"{where}: " + "; ".join(problems) + ".")
        else:
            yield ok(template.config_map, f"{where} {passing}.")
