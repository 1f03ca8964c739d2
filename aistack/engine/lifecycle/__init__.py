"""What a cloud account or project keeps between deployments, and what a create meets there.

The simulated clouds answer each registration on its own; a real cloud remembers. A name
that outlives `pulumi destroy` (a retained bucket, an undeletable quota preference), or
that the cloud holds in a soft-deleted state for days (a Cloud Logging bucket, a custom
role), decides whether the next `up` works, and two stacks that pick the same fixed name
in one account or project collide. `Account` replays deployments against that memory:

    account = Account()
    account.up(graph)          # problems: every name the create would meet, with the fix
    account.destroy(graph)     # what the cloud keeps, soft-deletes or forgets
    account.wait(days=1)

A resource takes part when the program fixed its cloud name (an input such as `name`,
`accountId`, `bucketId`: Pulumi's auto-names carry a random suffix and never collide) or
when it is a binding two stacks could both hold (an IAM member, an API enablement). What
each kind does on delete and on a create that meets an existing name is in
`aistack.engine.lifecycle.gcp` and `.aws`, each with its source.
"""

from collections.abc import Iterable

from aistack.engine.lifecycle import aws, gcp, model
from aistack.engine.lifecycle.model import CloudName, Fate, Meets, NameRule, Problem

__all__ = ["Account", "CloudName", "Fate", "Meets", "NameRule", "Problem"]


class Account(model.Account):
    """One AWS account or GCP project as deployments leave it, with both clouds' rules
    unless given others."""

    def __init__(self, rules: Iterable[NameRule] | None = None) -> None:
        super().__init__((*gcp.RULES, *aws.RULES) if rules is None else rules)
