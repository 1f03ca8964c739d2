"""AIS-D5-02: confidential or restricted data reaches serving load balancers only over TLS.

A stack whose governance classifies its data as confidential or restricted (prompts with
personal data, for instance) must not carry it in plain HTTP, not even inside the VPC:
anything in the network, or peered to it, could read it. Every listener of a serving load
balancer that carries such a classification tag is HTTPS with a TLS 1.2+ security policy,
or a plain-HTTP listener that only redirects to HTTPS. An explicit opt-out
(aws.InferenceTier's allowPlaintextHttp) is recorded on the load balancer and honoured.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aistack.config import DATA_CLASSIFICATION_TAG as CLASSIFICATION_TAG
from aistack.contracts.aws import PLAINTEXT_HTTP_TAG
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list, tags
from aistack.queries.aws_serving import listeners_of, serving_load_balancers

ENCRYPT_IN_TRANSIT = frozenset({"confidential", "restricted"})
# Elastic Load Balancing security policies that allow nothing older than TLS 1.2
# (ELB User Guide, "Security policies for your Application Load Balancer": the
# TLS13-1-2*, TLS13-1-3*, TLS-1-2* and FS-1-2* families). Without sslPolicy an HTTPS
# listener gets ELBSecurityPolicy-2016-08, which still accepts TLS 1.0.
_TLS12_OR_LATER = re.compile(r"^ELBSecurityPolicy-(TLS13-1-[23]|TLS-1-2|FS-1-2)(-|$)")


def _redirects_to_https(listener: Resource) -> bool:
    actions = as_list(listener.inputs.get("defaultActions"))
    return bool(actions) and all(
        action.get("type") == "redirect"
        and str((action.get("redirect") or {}).get("protocol", "")).upper() == "HTTPS"
        for action in actions
    )


@rule(
    id="AIS-D5-02",
    checklist=["D5"],
    info="Serving load balancers of confidential or restricted data listen only on HTTPS "
    "with a TLS 1.2+ policy; plain HTTP only redirects.",
    why="Prompts and answers carry the data the stack is classified for; in plain HTTP "
    "anything on the network path (the VPC, peered networks) can read them.",
    fix="Give aws.InferenceTier a certificateArn (ACM, same region), or set "
    "allowPlaintextHttp: true if plain HTTP inside the network is an accepted risk.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for balancer in serving_load_balancers(graph):
        classification = tags(balancer).get(CLASSIFICATION_TAG)
        if classification not in ENCRYPT_IN_TRANSIT:
            continue
        if tags(balancer).get(PLAINTEXT_HTTP_TAG) == "accepted":
            yield ok(balancer, f"{classification} data over plain HTTP, accepted explicitly.")
            continue
        problems = []
        for listener in listeners_of(graph, balancer):
            protocol = str(listener.inputs.get("protocol", "")).upper()
            policy = str(listener.inputs.get("sslPolicy") or "")
            if protocol == "HTTPS":
                if not _TLS12_OR_LATER.match(policy):
                    problems.append(f"{listener.name} allows TLS below 1.2 ({policy or 'default'})")
            elif not _redirects_to_https(listener):
                problems.append(f"{listener.name} serves {protocol or 'HTTP'} in plain text")
        if problems:
            yield fail(balancer, f"{classification} data: " + "; ".join(problems) + ".")
        else:
            yield ok(balancer, f"{classification} data only over TLS 1.2+.")
