"""AIS-C5-11: a GPU training group without an autoscaler is grown only by run commands that
check its cap first, and starts within it. The component's stack complies; groups grown by
an unchecked command, by no recorded command, or created above the cap fail; an autoscaled
group is left to its autoscaler's maximum."""

import pulumi
import pulumi_gcp as gcp
import pytest

from aistack.policy.rules.gcp.c5_11_gce_group_capped_at_max_nodes import capped_at
from tests.gcp.conftest import GOVERNANCE
from tests.gcp.test_training_pool import stack
from tests.policy.rules.gcp.test_gcp_mig_rules import CONFIG, SUBNET
from tests.policy.rules.shared_verdicts import build, verdicts_of

RULE = "AIS-C5-11"
CHECKED = (
    "AISTACK_MAX_NODES=2 && SIZE=$(gcloud compute instance-groups managed describe "
    "hand-mig --region=europe-west4 --format='value(targetSize)') && "
    '{ [ "$SIZE" -lt "$AISTACK_MAX_NODES" ] || exit 1; } && '
    "gcloud compute instance-groups managed create-instance hand-mig --region=europe-west4 "
    '--instance="hand-mig-$RUN_ID"'
)
UNCHECKED = (
    "gcloud compute instance-groups managed create-instance hand-mig --region=europe-west4 "
    '--instance="hand-mig-$RUN_ID"'
)


def hand_made(*, target_size=0, command=None, autoscaled=False):
    """A Spot GPU template and a group of it, optionally a run command and an autoscaler."""

    def program():
        made = gcp.compute.RegionInstanceTemplate(
            "hand-template",
            region="europe-west4",
            machine_type="g2-standard-8",
            disks=[{"boot": True, "source_image": "projects/p/global/images/x"}],
            network_interfaces=[{"subnetwork": SUBNET}],
            scheduling={"provisioning_model": "SPOT", "preemptible": True,
                        "automatic_restart": False, "on_host_maintenance": "TERMINATE",
                        "instance_termination_action": "DELETE"},
        )  # fmt: skip
        group = gcp.compute.RegionInstanceGroupManager(
            "hand-mig",
            name="hand-mig",
            region="europe-west4",
            base_instance_name="hand-mig",
            versions=[{"instance_template": made.self_link}],
            target_size=target_size,
        )
        if autoscaled:
            gcp.compute.RegionAutoscaler(
                "hand-autoscaler",
                region="europe-west4",
                target=group.id,
                autoscaling_policy={"max_replicas": 4, "min_replicas": 0},
            )
        if command:
            pulumi.export("submit", command)

    return program


@pytest.fixture(scope="module")
def components_graph():
    return build(lambda: stack(dict(GOVERNANCE))(), **CONFIG)


def test_the_pools_submit_command_checks_max_nodes(components_graph):
    assert verdicts_of(RULE, components_graph) == {"train-mig": "compliant"}


def test_a_group_grown_by_a_checked_command_within_its_cap_complies(verdicts):
    assert verdicts(RULE, hand_made(command=CHECKED), **CONFIG) == {"hand-mig": "compliant"}


@pytest.mark.parametrize(
    "program",
    [
        hand_made(command=UNCHECKED),
        hand_made(),  # no recorded way to start a run: nothing bounds what is done by hand
        hand_made(target_size=3, command=CHECKED),  # created above its cap of 2
    ],
    ids=["unchecked-command", "no-command", "above-the-cap"],
)
def test_groups_without_a_cap_or_above_it_fail(verdicts, program):
    assert verdicts(RULE, program, **CONFIG) == {"hand-mig": "non-compliant"}


def test_an_autoscaled_group_is_left_to_its_autoscalers_maximum(verdicts):
    assert verdicts(RULE, hand_made(autoscaled=True), **CONFIG) == {"": "not-applicable"}


def test_the_check_must_come_before_the_create():
    assert capped_at(CHECKED) == 2
    create_first = (
        UNCHECKED + " && " + CHECKED.split(" && gcloud compute instance-groups managed create")[0]
    )
    assert capped_at(create_first) is None
