"""The Google Cloud vocabulary aistack writes and reads where labels cannot go.

gcp.Network writes it; the S1/C2 queries, the rules and `aistack scan` read it. No
pulumi_gcp here.
"""

from __future__ import annotations

__all__ = ["TIER_MARK"]

#: Where a subnet's or firewall rule's tier is written (compute networking takes no labels):
#: gcp.Network starts their descriptions with it.
TIER_MARK = "aistack-network-tier="
