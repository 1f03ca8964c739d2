"""AIS-S3-01: every internet-facing or aistack load balancer has a WAF web ACL with a per-client
rate-based rule.

The gateway on each node limits each client's request rate, but only per node and after the
request has reached a GPU machine; WAF blocks a flood at the edge, before it costs anything,
and sees every node's traffic at once. A load balancer counts when it is internet-facing
(not `internal`) or belongs to an aistack component. The web ACL must be associated with
it (wafv2 WebAclAssociation) and hold a rule with a rate-based statement whose action
blocks (or a ruleJson with one).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list, is_aistack_managed
from aistack.queries.aws_serving import LOAD_BALANCERS, is_application

WEB_ACL = "aws:wafv2/webAcl:WebAcl"
ASSOCIATION = "aws:wafv2/webAclAssociation:WebAclAssociation"


def _blocks(rule_: dict[str, Any]) -> bool:
    action = rule_.get("action") or rule_.get("Action") or {}
    return isinstance(action, dict) and ("block" in action or "Block" in action)


def rate_limited(acl: Resource) -> bool:
    """True when the web ACL has a blocking rule with a rate-based statement."""
    for rule_ in as_list(acl.inputs.get("rules")):
        statement = (rule_ or {}).get("statement") or {}
        if statement.get("rateBasedStatement") and _blocks(rule_):
            return True
    raw = acl.inputs.get("ruleJson")
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return False
        return any(
            isinstance(r, dict)
            and (r.get("Statement") or {}).get("RateBasedStatement")
            and _blocks(r)
            for r in as_list(parsed)
        )
    return False


@rule(
    id="AIS-S3-01",
    checklist=["S3"],
    info="Internet-facing and aistack load balancers sit behind a WAF web ACL with a "
    "blocking per-client rate-based rule.",
    why="A flood that reaches the nodes already costs GPU time, and per-node limits do not "
    "see the whole fleet; a rate-based WAF rule stops it at the edge.",
    fix="Use aws.InferenceTier (waf_rate_limit), or associate a wafv2 WebAcl with a "
    "rateBasedStatement rule (action block) with the load balancer.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    acls = {str(a.outputs.get("arn")): a for a in graph.of_type(WEB_ACL)}
    associated: dict[str, list[Resource]] = {}
    for association in graph.of_type(ASSOCIATION):
        acl = acls.get(str(association.inputs.get("webAclArn")))
        if acl is not None:
            associated.setdefault(str(association.inputs.get("resourceArn")), []).append(acl)
    for balancer in (b for token in LOAD_BALANCERS for b in graph.of_type(token)):
        if not is_application(balancer):
            continue
        public = not balancer.inputs.get("internal")
        if not public and not is_aistack_managed(graph, balancer):
            continue
        attached = associated.get(str(balancer.outputs.get("arn")), [])
        where = "internet-facing" if public else "aistack"
        if not attached:
            yield fail(balancer, f"{where} load balancer has no WAF web ACL associated.")
        elif not any(rate_limited(acl) for acl in attached):
            yield fail(
                balancer, f"{where} load balancer's web ACL has no blocking rate-based rule."
            )
        else:
            yield ok(balancer, "behind a WAF web ACL with a blocking rate-based rule.")
