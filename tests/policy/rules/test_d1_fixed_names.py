"""AIS-D1-04 (GCP) and AIS-D1-05 (AWS): every name a stack fixes is its own. Both ways on
small programs; the example stacks are held to them by the rule-set runs over every
example, and their up / destroy / up replay is tests/stacks/test_lifecycle.py."""

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from aistack import gcp as aistack_gcp
from aistack.contracts.naming import stack_scoped

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}


def test_gcp_ids_the_components_pick_are_stack_scoped(verdicts):
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        aistack_gcp.WorkloadIdentity("ids", {"governance": GOVERNANCE}, services=apis)

    found = verdicts("AIS-D1-04", program)
    assert found and set(found.values()) == {"compliant"}


def test_a_fixed_gcp_id_another_stack_could_pick_fails(verdicts):
    def program():
        gcp.serviceaccount.Account("train", account_id="train-vms", project="team-ml-prod")
        gcp.serviceaccount.Account(
            "scoped",
            account_id=stack_scoped("train-vms", "aistack", "dev", limit=30),
            project="team-ml-prod",
        )

    assert verdicts("AIS-D1-04", program) == {"train": "non-compliant", "scoped": "compliant"}


def test_a_log_bucket_kept_and_adopted_is_the_stack_s_own_even_unscoped(verdicts):
    def program():
        gcp.logging.ProjectBucketConfig(
            "kept",
            bucket_id="audit",
            location="europe-west4",
            project="p",
            opts=pulumi.ResourceOptions(retain_on_delete=True),
        )
        gcp.logging.ProjectBucketConfig(
            "dropped", bucket_id="train", location="europe-west4", project="p"
        )

    assert verdicts("AIS-D1-04", program) == {"kept": "compliant", "dropped": "non-compliant"}


def test_aws_names_carry_the_stack_or_fail(verdicts):
    def program():
        aws.ecr.Repository("fixed", name="trainer")
        aws.ecr.Repository("scoped", name="aistack/dev/trainer")
        aws.sqs.Queue("carries", name="aistack-dev-kill-switch-dlq")

    assert verdicts("AIS-D1-05", program, **{"aws:region": "us-east-1"}) == {
        "fixed": "non-compliant",
        "scoped": "compliant",
        "carries": "compliant",
    }
