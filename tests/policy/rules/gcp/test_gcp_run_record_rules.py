"""GCP rules on runs in GPU training groups (gcp.TrainingPool, mig): the seed (E3), the
commit and config hash (E4) on every run's VM, checkpoints in a versioned bucket with the
run's manifest beside them (E5), replaced VMs resuming from the last checkpoint (T2).
Each: the component's stack complies, a hand-written group that misses the point fails,
a stack without a training group is not concerned."""

import pulumi
import pulumi_gcp as gcp
import pytest

from aistack.node import render_startup_script
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE
from tests.gcp.test_training_pool import PROJECT, stack
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-gcp-gcp_run_record_rules")

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
SUBNET = f"projects/{PROJECT}/regions/europe-west4/subnetworks/train"
SEEDED = (
    "gcloud compute instance-groups managed create-instance legacy-mig --region=europe-west4 "
    '--instance="legacy-mig-$RUN_ID" --stateful-metadata="aistack-run-id=$RUN_ID,'
    'aistack-seed=$SEED"'
)
FULL = SEEDED.replace('$SEED"', '$SEED,aistack-code-commit=$C,aistack-config-hash=$H"')
MANIFEST = (
    'printf \'{"code_commit":"%s","config_hash":"%s"}\' "$C" "$H" | '
    'gcloud storage cp - "gs://legacy-ckpt/runs/$RUN_ID/manifest.json" && ' + FULL
)


def components():
    stack(dict(GOVERNANCE))()


def hand_written(
    command=None, checkpoint_uri=None, versioned=True, healing=True, redistribution="NONE"
):
    """A Spot GPU template and group of 0 written by hand, optionally with a checkpoint
    bucket, autohealing and an exported run command."""

    def program():
        gcp.storage.Bucket(
            "legacy-ckpt", name="legacy-ckpt", location="europe-west4",
            versioning={"enabled": versioned},
        )  # fmt: skip
        script = render_startup_script(
            {
                "cloud": "gcp",
                "instanceGroup": "legacy-mig",
                "maxRuntimeMinutes": 60,
                **({"checkpointUri": checkpoint_uri} if checkpoint_uri else {}),
            }
        )
        template = gcp.compute.RegionInstanceTemplate(
            "legacy-template",
            region="europe-west4",
            machine_type="g2-standard-8",
            disks=[{"boot": True, "source_image": "projects/p/global/images/x"}],
            network_interfaces=[{"subnetwork": SUBNET}],
            scheduling={"provisioning_model": "SPOT", "preemptible": True,
                        "automatic_restart": False, "instance_termination_action": "DELETE"},
            metadata={"startup-script": script},
        )  # fmt: skip
        health = gcp.compute.HealthCheck("legacy-health", tcp_health_check={"port": 22})
        gcp.compute.RegionInstanceGroupManager(
            "legacy-mig",
            name="legacy-mig",
            region="europe-west4",
            base_instance_name="legacy-mig",
            versions=[{"instance_template": template.self_link}],
            target_size=0,
            update_policy={
                "type": "OPPORTUNISTIC",
                "minimal_action": "REPLACE",
                "instance_redistribution_type": redistribution,
            },
            auto_healing_policies=(
                {"health_check": health.id, "initial_delay_sec": 600} if healing else None
            ),
        )
        if command:
            pulumi.export("submitCommand", command)

    return program


def no_training_group():
    gcp.storage.Bucket("raw", location="europe-west4")


@pytest.fixture(scope="module")
def components_graph():
    """The pool's stack, built once for the module's compliant tests."""
    with shared(build(components, **CONFIG)) as graph:
        yield graph


@pytest.fixture(scope="module")
def no_training_group_graph():
    """A stack without a training group, built once for the cases it concerns."""
    with shared(build(no_training_group, **CONFIG)) as graph:
        yield graph


@pytest.mark.parametrize(("rule", "verdict"), [("AIS-E3-02", "compliant"),
                                               ("AIS-E4-02", "compliant"),
                                               ("AIS-T2-03", "compliant")])  # fmt: skip
def test_the_pools_group_records_its_runs_and_resumes(rule, verdict, components_graph):
    assert verdicts_of(rule, components_graph) == {"train-mig": verdict}


@pytest.mark.parametrize("rule", ["AIS-E3-02", "AIS-E4-02", "AIS-E5-02", "AIS-T2-03"])
def test_a_stack_without_a_training_group_is_not_concerned(rule, no_training_group_graph):
    assert verdicts_of(rule, no_training_group_graph) == {"": "not-applicable"}


# ---- E3 -----------------------------------------------------------------------------------


def test_e3_a_run_command_passing_the_seed_as_stateful_metadata_complies(verdicts):
    assert verdicts("AIS-E3-02", hand_written(SEEDED), **CONFIG) == {"legacy-mig": "compliant"}


@pytest.mark.parametrize("command", [None, SEEDED.replace(",aistack-seed=$SEED", "")])
def test_e3_no_run_command_or_one_without_the_seed_fails(verdicts, command):
    assert verdicts("AIS-E3-02", hand_written(command), **CONFIG) == {"legacy-mig": "non-compliant"}


# ---- E4 -----------------------------------------------------------------------------------


def test_e4_a_run_command_passing_commit_and_config_complies(verdicts):
    assert verdicts("AIS-E4-02", hand_written(FULL), **CONFIG) == {"legacy-mig": "compliant"}


@pytest.mark.parametrize("command", [None, SEEDED, FULL.replace(",aistack-config-hash=$H", "")])
def test_e4_a_run_without_commit_or_config_hash_fails(verdicts, command):
    assert verdicts("AIS-E4-02", hand_written(command), **CONFIG) == {"legacy-mig": "non-compliant"}


# ---- E5 -----------------------------------------------------------------------------------


def test_e5_the_pool_checkpoints_to_its_versioned_bucket_beside_the_manifest(components_graph):
    assert verdicts_of("AIS-E5-02", components_graph) == {"train-template": "compliant"}


def test_e5_a_hand_written_group_with_bucket_and_manifest_complies(verdicts):
    program = hand_written(MANIFEST, checkpoint_uri="gs://legacy-ckpt/runs")
    assert verdicts("AIS-E5-02", program, **CONFIG) == {"legacy-template": "compliant"}


@pytest.mark.parametrize(
    "program",
    [
        hand_written(MANIFEST),  # no checkpoint URI at all
        hand_written(MANIFEST, checkpoint_uri="gs://someone-elses/runs"),
        hand_written(MANIFEST, checkpoint_uri="gs://legacy-ckpt/runs", versioned=False),
        hand_written(FULL, checkpoint_uri="gs://legacy-ckpt/runs"),  # no manifest written
    ],
    ids=["no-uri", "foreign-bucket", "unversioned", "no-manifest"],
)
def test_e5_checkpoints_outside_a_versioned_bucket_or_without_manifest_fail(verdicts, program):
    assert verdicts("AIS-E5-02", program, **CONFIG) == {"legacy-template": "non-compliant"}


# ---- T2 -----------------------------------------------------------------------------------


def test_t2_an_autohealing_group_restoring_checkpoints_complies(verdicts):
    program = hand_written(checkpoint_uri="gs://legacy-ckpt/runs")
    assert verdicts("AIS-T2-03", program, **CONFIG) == {"legacy-mig": "compliant"}


@pytest.mark.parametrize(
    "program",
    [
        hand_written(checkpoint_uri="gs://legacy-ckpt/runs", healing=False),
        hand_written(checkpoint_uri="gs://legacy-ckpt/runs", redistribution="PROACTIVE"),
        hand_written(),
    ],
    ids=["no-autohealing", "proactive-redistribution", "no-restore"],
)
def test_t2_no_autohealing_proactive_redistribution_or_no_restore_fails(verdicts, program):
    assert verdicts("AIS-T2-03", program, **CONFIG) == {"legacy-mig": "non-compliant"}
