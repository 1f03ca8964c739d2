"""Rules on GPU VMs in managed instance groups (gcp.TrainingPool, mig): resume on Spot (T1),
lifetime (T5), local SSD (D3), empty groups and deletion through them (C5), starvation
alerts (T3), retained regional logs (T6), identity and SSH (C6), same-region data (D2),
pinned dataset versions (D4). Each: the component's stack complies, a hand-written one
that misses the point fails."""

import pulumi_gcp as gcp
import pytest

from aistack.node import render_startup_script
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE
from tests.gcp.test_training_pool import PROJECT, stack
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-gcp-gcp_mig_rules")

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
SUBNET = f"projects/{PROJECT}/regions/europe-west4/subnetworks/train"
DEFAULT_SA = "123456789012-compute@developer.gserviceaccount.com"


def components():
    stack(dict(GOVERNANCE))()


def hand_written(startup_script=None, **template):
    """A GPU template and group as often written: Spot that stops, no limit, no SSD,
    default account, a group of 2, no watchdog, no alert, no log routing."""

    def program():
        bucket = gcp.storage.Bucket("data", name="team-data", location="US")
        args = {
            "region": "europe-west4",
            "machine_type": "g2-standard-8",
            "disks": [{"boot": True, "source_image": "projects/p/global/images/x"}],
            "network_interfaces": [{"subnetwork": SUBNET}],
            "scheduling": {
                "provisioning_model": "SPOT",
                "preemptible": True,
                "automatic_restart": False,
                "on_host_maintenance": "TERMINATE",
                "instance_termination_action": "STOP",
            },
            "service_account": {"email": DEFAULT_SA, "scopes": ["cloud-platform"]},
            "metadata": {"startup-script": startup_script} if startup_script else None,
            **template,
        }
        made = gcp.compute.RegionInstanceTemplate("legacy-template", **args)
        gcp.compute.RegionInstanceGroupManager(
            "legacy-mig",
            name="legacy-mig",
            region="europe-west4",
            base_instance_name="legacy",
            versions=[{"instance_template": made.self_link}],
            target_size=2,
        )
        del bucket

    return program


@pytest.fixture(scope="module")
def components_graph():
    """The component's stack, built once for the module's compliant tests."""
    with shared(build(components, **CONFIG)) as graph:
        yield graph


@pytest.fixture(scope="module")
def legacy_graph():
    """The hand-written template and group as is, built once for the tests that judge it."""
    with shared(build(hand_written(), **CONFIG)) as graph:
        yield graph


def legacy_script(**overrides):
    return render_startup_script(
        {
            "cloud": "gcp",
            "instanceGroup": "another-mig",
            "maxRuntimeMinutes": 60,
            "datasetUri": "gs://team-data/ds",
            "datasetVersion": "v1",
            **overrides,
        }
    )


def test_t1_the_pool_flushes_and_deletes_a_preempted_vm(components_graph):
    assert verdicts_of("AIS-T1-04", components_graph) == {"train-template": "compliant"}


def test_t1_a_spot_template_that_stops_or_never_flushes_fails(verdicts, legacy_graph):
    assert verdicts_of("AIS-T1-04", legacy_graph) == {"legacy-template": "non-compliant"}
    deleting = hand_written(
        scheduling={"provisioning_model": "SPOT", "preemptible": True,
                    "automatic_restart": False, "on_host_maintenance": "TERMINATE",
                    "instance_termination_action": "DELETE"}
    )  # fmt: skip
    assert verdicts("AIS-T1-04", deleting, **CONFIG) == {"legacy-template": "non-compliant"}


def test_t5_the_pools_vms_have_a_max_run_duration(components_graph):
    assert verdicts_of("AIS-T5-04", components_graph) == {"train-template": "compliant"}


def test_t5_a_gpu_template_without_one_fails(legacy_graph):
    assert verdicts_of("AIS-T5-04", legacy_graph) == {"legacy-template": "non-compliant"}


def test_d3_the_pool_attaches_local_ssds(components_graph):
    assert verdicts_of("AIS-D3-05", components_graph) == {"train-template": "compliant"}


def test_d3_a_gpu_template_without_local_ssd_fails(legacy_graph):
    assert verdicts_of("AIS-D3-05", legacy_graph) == {"legacy-template": "non-compliant"}


def test_c5_the_pools_group_starts_empty(components_graph):
    assert verdicts_of("AIS-C5-09", components_graph) == {"train-mig": "compliant"}


def test_c5_a_gpu_group_of_two_fails(legacy_graph):
    assert verdicts_of("AIS-C5-09", legacy_graph) == {"legacy-mig": "non-compliant"}


def test_c5_the_pools_idle_vms_delete_through_their_group(components_graph):
    assert verdicts_of("AIS-C5-10", components_graph) == {"train-mig": "compliant"}


def test_c5_no_watchdog_or_one_aimed_at_another_group_fails(verdicts, legacy_graph):
    assert verdicts_of("AIS-C5-10", legacy_graph) == {"legacy-mig": "non-compliant"}
    other = hand_written(startup_script=legacy_script())
    assert verdicts("AIS-C5-10", other, **CONFIG) == {"legacy-mig": "non-compliant"}


def test_t3_the_pool_alerts_on_gpu_starvation(components_graph):
    assert verdicts_of("AIS-T3-03", components_graph) == {"train-mig": "compliant"}


def test_t3_a_gpu_group_without_an_alert_fails(legacy_graph):
    assert verdicts_of("AIS-T3-03", legacy_graph) == {"legacy-mig": "non-compliant"}


def test_t6_the_pools_logs_stay_in_a_regional_bucket(components_graph):
    assert verdicts_of("AIS-T6-03", components_graph) == {"train-mig": "compliant"}


def test_t6_no_sink_or_a_short_global_bucket_fails(verdicts, legacy_graph):
    assert verdicts_of("AIS-T6-03", legacy_graph) == {"legacy-mig": "non-compliant"}

    def short():
        hand_written()()
        gcp.logging.ProjectBucketConfig("b", project=PROJECT, bucket_id="b", location="global",
                                        retention_days=7)  # fmt: skip
        gcp.logging.ProjectSink("s", destination=f"logging.googleapis.com/projects/{PROJECT}"
                                "/locations/global/buckets/b", filter='"legacy-"')  # fmt: skip

    assert verdicts("AIS-T6-03", short, **CONFIG) == {"legacy-mig": "non-compliant"}


def test_c6_the_pools_vms_use_their_account_and_os_login(components_graph):
    assert verdicts_of("AIS-C6-17", components_graph) == {"train-template": "compliant"}


def test_c6_the_default_account_and_project_ssh_keys_fail(legacy_graph):
    assert verdicts_of("AIS-C6-17", legacy_graph) == {"legacy-template": "non-compliant"}


def test_d2_the_pool_syncs_from_its_region(components_graph):
    assert verdicts_of("AIS-D2-03", components_graph) == {"train-template": "compliant"}


def test_d2_vms_syncing_from_a_bucket_elsewhere_fail(verdicts):
    program = hand_written(startup_script=legacy_script())
    assert verdicts("AIS-D2-03", program, **CONFIG) == {"legacy-template": "non-compliant"}


def test_d4_the_pool_pins_the_dataset_version(components_graph):
    assert verdicts_of("AIS-D4-03", components_graph) == {"train-template": "compliant"}


def test_d4_an_unpinned_version_fails(verdicts):
    script = legacy_script().replace("AISTACK_DATASET_VERSION=v1", "AISTACK_DATASET_VERSION=latest")
    program = hand_written(startup_script=script)
    assert verdicts("AIS-D4-03", program, **CONFIG) == {"legacy-template": "non-compliant"}
