"""The CrossGuard pack judges GCP resources as `aistack check` does."""

import pulumi_gcp as gcp

from aistack import engine, policy
from aistack import gcp as aistack_gcp
from aistack.policy.crossguard import graph_from_policy_resources

from ...crossguard_resources import policy_resources as _policy_resources

GOVERNANCE = {"owner": "a", "costCenter": "b", "allowedRegions": ["europe-west4"]}
GCP_RULES = ("AIS-C4-02", "AIS-D1-02", "AIS-D1-03")


def _program():
    apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
    aistack_gcp.DatasetBucket(
        "ckpt",
        {"kind": "checkpoints", "region": "europe-west4", "governance": GOVERNANCE},
        services=apis,
    )
    gcp.storage.Bucket("loose", location="EU")


def test_the_pack_judges_gcp_resources_like_aistack_check():
    graph = engine.run(_program, config={"gcp:project": "team-ml-prod"})
    rebuilt = graph_from_policy_resources(_policy_resources(graph))
    rules = [r for r in policy.all_rules() if r.id in GCP_RULES]
    assert len(rules) == len(GCP_RULES)
    for rule in rules:
        ours = {(f.resource_name, f.status) for f in rule.evaluate(graph)}
        theirs = {(f.resource_name, f.status) for f in rule.evaluate(rebuilt)}
        assert ours == theirs, rule.id
        assert ("loose", "non-compliant") in ours, rule.id
