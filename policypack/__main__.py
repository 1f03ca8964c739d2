"""aistack's checklist rules as a CrossGuard policy pack.

    pulumi preview --policy-pack policypack      # from the repository root

Every rule of `aistack check` runs as a stack validation policy: mandatory rules block the
update, advisory rules warn.
"""

from pulumi_policy import PolicyPack

from aistack.policy.crossguard import policies

PolicyPack(name="aistack", policies=policies())
