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
fail with the provider's "not found", which `found` turns into None. Any other failure
(a permission, a disabled API) is raised: a lookup that cannot tell must not create a
duplicate on a guess.
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
#: RepositoryNotFoundException, Compute Engine's 404.
_NOT_FOUND = re.compile(r"not found|NotFound|does not exist|\b404\b", re.IGNORECASE)


def found(lookup: Callable[[], T]) -> T | None:
    """What `lookup` returns, or None when it reports that nothing has the name."""
    try:
        return lookup()
    except Exception as error:
        if _NOT_FOUND.search(str(error)):
            return None
        raise


def adopting(opts: pulumi.ResourceOptions, import_id: str | None) -> pulumi.ResourceOptions:
    """`opts`, importing the resource with id `import_id` when it already exists."""
    if not import_id:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(import_=import_id))
