"""Taking over what an earlier deployment left: the lookup, then Pulumi's `import` option.

A resource that holds data (images, a notebook's disk) is retained on `pulumi destroy`, and
some names are held by the cloud after a delete (a workload identity pool, 30 days). Its
name is stack-scoped (aistack.contracts.naming), so the next `up` of the same stack asks
for the same name and, without help, meets a 409. The component looks the name up first
and, when the cloud holds it, declares the resource with `import_=<its id>`. The Pulumi
engine then reads it, takes it into the stack and applies the program's inputs to it
(pulumi/pulumi developer-docs/architecture/import.md: "If the resource does not exist, it
is imported"; "If the resource exists and has the same ID ... treated like any other
resource", so later `up`s are unchanged; since pulumi/pulumi#19339 an import whose inputs
differ succeeds and then updates). A first `up` finds nothing and creates.

Lookups that list (`getRepositories`) answer an empty list for nothing; lookups by id
fail with the provider's "not found", which `found` turns into None, as it does an API
the project has not enabled yet (a first `up`). Any other failure (a permission) is
raised: a lookup that cannot tell must not create a duplicate on a guess. Every lookup goes
through `found`.

The lookup also finds the resource on every later `up`, while the stack manages it: the
import then changes nothing, and the component declares the resource exactly as on its
first `up` (its key included). What cannot change on an existing resource (the key a
repository or disk was created with, Workbench's input-only owners) is in the resource's
`ignore_changes`: an import whose inputs force a replacement is refused by the engine
("previously-imported resources that still specify an ID may not be replaced",
pkg/resource/deploy/step_generator.go). The import-then-update needs the Pulumi CLI 3.174
or later (the release of pulumi/pulumi#19339).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import pulumi

__all__ = ["adopting", "found"]

T = TypeVar("T")
#: How the providers say a lookup by id found nothing: terraform-provider-google's data
#: sources ("... not found", from HandleDataSourceNotFoundError), ECR's
#: RepositoryNotFoundException, Compute Engine's "Error 404".
_NOT_FOUND = re.compile(r"not found|NotFound|does not exist|Error 404\b", re.IGNORECASE)
#: A project whose API is not enabled yet holds nothing of it: on a first `up` the lookups
#: run before the stack's ProjectServices enable the APIs, and Google answers 403
#: SERVICE_DISABLED ("... API has not been used in project ... before or it is disabled").
_DISABLED = re.compile(r"SERVICE_DISABLED|has not been used in project|it is disabled")


def found(lookup: Callable[[], T]) -> T | None:
    """What `lookup` returns, or None when it reports that nothing has the name."""
    try:
        return lookup()
    except Exception as error:
        if _NOT_FOUND.search(str(error)) or _DISABLED.search(str(error)):
            return None
        raise


def adopting(opts: pulumi.ResourceOptions, import_id: str | None) -> pulumi.ResourceOptions:
    """`opts`, importing the resource with id `import_id` when it already exists."""
    if not import_id:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(import_=import_id))
