"""Rules over job templates (Jobs and JobSets kept in ConfigMaps): T2 (disruptions not
counted, bounded retries), T5 (a deadline), D3 (a sized node-local cache), T1 (checkpoint
URI, preStop, Spot-sized grace), E1 (digests), D4 (run manifest). Each compliant with
k8s.TrainingJobTemplate, as a Job and as a JobSet, and violated by the template a team
might write by hand."""

import copy
import json

import pulumi_kubernetes as k8s
import pytest

from aistack import k8s as aistack_k8s

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
DIGEST = "sha256:" + "0" * 64
RULES = ("AIS-T2-02", "AIS-T5-02", "AIS-D3-02", "AIS-T1-02", "AIS-E1-06", "AIS-D4-02")


def _template(nodes=1):
    def program():
        aistack_k8s.TrainingJobTemplate(
            "llama",
            {
                "governance": GOVERNANCE,
                "namespace": "ml-train",
                "queue": "ml-train",
                "serviceAccount": "trainer",
                "image": f"registry.example.com/train@{DIGEST}",
                "gpusPerNode": 8,
                "nodes": nodes,
                "maxRuntimeMinutes": 600,
                "checkpointUri": "s3://ckpt/llama",
                "datasetUri": "s3://data/tokens",
                "datasetVersion": "v3",
            },
        )

    return program


#: A hand-written Job that gets everything right, to break one thing at a time.
GOOD_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "generateName": "train-",
        "labels": {"kueue.x-k8s.io/queue-name": "ml"},
    },
    "spec": {
        "backoffLimit": 3,
        "activeDeadlineSeconds": 3600,
        "podFailurePolicy": {
            "rules": [
                {
                    "action": "Ignore",
                    "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                }
            ]
        },
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 15,
                "containers": [
                    {
                        "name": "trainer",
                        "image": f"registry.example.com/train@{DIGEST}",
                        "env": [
                            {"name": "AISTACK_CHECKPOINT_URI", "value": "s3://ckpt"},
                            {"name": "AISTACK_DATASET_VERSION", "value": "v3"},
                            {"name": "AISTACK_RUN_ID", "value": "r1"},
                            {"name": "AISTACK_SEED", "value": "1"},
                            {"name": "AISTACK_CODE_COMMIT", "value": "abc"},
                            {"name": "AISTACK_CONFIG_HASH", "value": "def"},
                        ],
                        "lifecycle": {
                            "preStop": {"exec": {"command": ["/bin/sh", "-c", "kill 1"]}}
                        },
                        "resources": {"requests": {"ephemeral-storage": "100Gi"}},
                    }
                ],
                "volumes": [{"name": "cache", "emptyDir": {"sizeLimit": "100Gi"}}],
            }
        },
    },
}


def _hand_written(document, as_yaml=False):
    def program():
        if as_yaml:
            import yaml

            text = yaml.safe_dump(document)
        else:
            text = json.dumps(document)
        k8s.core.v1.ConfigMap(
            "hand", metadata={"name": "hand", "namespace": "ml-train"}, data={"job.yaml": text}
        )

    return program


def _broken(*edits):
    document = copy.deepcopy(GOOD_JOB)
    for path, value in edits:
        target = document
        for key in path[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return document


_DELETE = object()
_SPEC = ("spec",)
_POD = ("spec", "template", "spec")
_TRAINER = (*_POD, "containers", 0)


@pytest.mark.parametrize("nodes", [1, 3])
@pytest.mark.parametrize("rule_id", RULES)
def test_a_training_job_template_complies(verdicts, rule_id, nodes):
    assert verdicts(rule_id, _template(nodes)) == {"llama-template": "compliant"}


@pytest.mark.parametrize("rule_id", RULES)
def test_a_hand_written_template_that_gets_it_right_complies_in_yaml_too(verdicts, rule_id):
    assert verdicts(rule_id, _hand_written(GOOD_JOB, as_yaml=True)) == {"hand": "compliant"}


def test_configmaps_without_a_template_are_not_judged(verdicts):
    def program():
        k8s.core.v1.ConfigMap("settings", metadata={"name": "s"}, data={"lr": "0.1"})

    assert verdicts("AIS-T2-02", program) == {"": "not-applicable"}


@pytest.mark.parametrize(
    ("rule_id", "edits"),
    [
        # T2: preemptions counted, unbounded or unset retries, restarts in place.
        ("AIS-T2-02", [((*_SPEC, "podFailurePolicy"), _DELETE)]),
        (
            "AIS-T2-02",
            [((*_SPEC, "podFailurePolicy", "rules", 0, "onPodConditions", 0, "status"), "False")],
        ),
        ("AIS-T2-02", [((*_SPEC, "backoffLimit"), _DELETE)]),
        ("AIS-T2-02", [((*_SPEC, "backoffLimit"), 1000)]),
        ("AIS-T2-02", [((*_POD, "restartPolicy"), "OnFailure")]),
        # T5: no deadline and no Kueue max execution time.
        ("AIS-T5-02", [((*_SPEC, "activeDeadlineSeconds"), _DELETE)]),
        # D3: no cache, an unsized one, no disk request.
        ("AIS-D3-02", [((*_POD, "volumes"), _DELETE)]),
        ("AIS-D3-02", [((*_POD, "volumes", 0, "emptyDir"), {})]),
        ("AIS-D3-02", [((*_TRAINER, "resources"), _DELETE)]),
        (
            "AIS-D3-02",
            [((*_POD, "volumes"), [{"name": "shm", "emptyDir": {"medium": "Memory"}}])],
        ),
        # T1: no checkpoint URI, no preStop, a grace period Spot never gives.
        ("AIS-T1-02", [((*_TRAINER, "env"), [])]),
        ("AIS-T1-02", [((*_TRAINER, "lifecycle"), _DELETE)]),
        ("AIS-T1-02", [((*_POD, "terminationGracePeriodSeconds"), 600)]),
        ("AIS-T1-02", [((*_POD, "terminationGracePeriodSeconds"), _DELETE)]),
        # E1: a tag.
        ("AIS-E1-06", [((*_TRAINER, "image"), "registry.example.com/train:v1")]),
        # D4: no dataset version, a floating one, no seed.
        ("AIS-D4-02", [((*_TRAINER, "env"), [])]),
        ("AIS-D4-02", [((*_TRAINER, "env", 1, "value"), "latest")]),
        ("AIS-D4-02", [((*_TRAINER, "env", 3), {"name": "OTHER", "value": "1"})]),
    ],
)
def test_a_hand_written_job_template_missing_a_safeguard_fails(verdicts, rule_id, edits):
    assert verdicts(rule_id, _hand_written(_broken(*edits))) == {"hand": "non-compliant"}


def test_kueues_max_execution_time_alone_is_a_deadline(verdicts):
    document = _broken(((*_SPEC, "activeDeadlineSeconds"), _DELETE))
    document["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] = "3600"
    assert verdicts("AIS-T5-02", _hand_written(document)) == {"hand": "compliant"}
    document["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] = "0"
    assert verdicts("AIS-T5-02", _hand_written(document)) == {"hand": "non-compliant"}


def _jobset(**policy):
    child = copy.deepcopy(GOOD_JOB["spec"])
    child["backoffLimit"] = 0
    child["podFailurePolicy"]["rules"][0]["action"] = "FailJob"
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"generateName": "train-", "labels": {}},
        "spec": {
            "failurePolicy": policy,
            "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": child}}],
        },
    }


RESTART_ON_DISRUPTION = {
    "name": "disrupted",
    "action": "RestartJobSetAndIgnoreMaxRestarts",
    "onJobFailureReasons": ["PodFailurePolicy"],
}


def test_a_jobset_with_bounded_restarts_and_a_disruption_rule_complies(verdicts):
    document = _jobset(maxRestarts=3, rules=[RESTART_ON_DISRUPTION])
    assert verdicts("AIS-T2-02", _hand_written(document)) == {"hand": "compliant"}


@pytest.mark.parametrize(
    "policy",
    [
        {"rules": [RESTART_ON_DISRUPTION]},  # maxRestarts defaults to 0
        {"maxRestarts": 100, "rules": [RESTART_ON_DISRUPTION]},
        {"maxRestarts": 3},  # disruptions counted
    ],
)
def test_a_jobset_without_bounded_restarts_or_a_disruption_rule_fails(verdicts, policy):
    assert verdicts("AIS-T2-02", _hand_written(_jobset(**policy))) == {"hand": "non-compliant"}


def test_a_jobset_restarting_on_disruption_forever_without_a_deadline_fails(verdicts):
    document = _jobset(maxRestarts=3, rules=[RESTART_ON_DISRUPTION])
    del document["spec"]["replicatedJobs"][0]["template"]["spec"]["activeDeadlineSeconds"]
    assert verdicts("AIS-T2-02", _hand_written(document)) == {"hand": "non-compliant"}
    assert verdicts("AIS-T5-02", _hand_written(document)) == {"hand": "non-compliant"}


def test_a_jobset_whose_jobs_ignore_disruptions_instead_of_failing_fails(verdicts):
    # An ignored pod in a gang is replaced alone while the others wait on it.
    document = _jobset(maxRestarts=3, rules=[RESTART_ON_DISRUPTION])
    child = document["spec"]["replicatedJobs"][0]["template"]["spec"]
    child["podFailurePolicy"]["rules"][0]["action"] = "Ignore"
    assert verdicts("AIS-T2-02", _hand_written(document)) == {"hand": "non-compliant"}
