"""The cost workload comes from the key the docs name, in any project, or is labelled assumed."""

import pulumi_aws as aws

from aistack import cost, engine


def _graph(config, project="team-project"):
    return engine.run(lambda: aws.s3.Bucket("data"), project=project, config=config)


def test_aistack_workload_is_honoured_in_a_project_of_another_name():
    graph = _graph({"aistack:workload": {"trainingGpuHoursPerMonth": 12}})
    report = cost.estimate(graph)
    assert report.profile.training_gpu_hours_per_month == 12
    assert report.workload_source == "aistack:workload"
    assert not report.workload_assumed


def test_without_a_stated_workload_the_defaults_are_labelled_assumed():
    report = cost.estimate(_graph({}))
    assert report.profile == cost.WorkloadProfile()
    assert report.workload_assumed
    assert report.as_dict()["workload_source"] == "assumed"


def test_the_workload_prints_as_the_keys_a_user_writes():
    report = cost.estimate(_graph({"aistack:workload": {"datasetStorageGb": 7}}))
    profile = report.as_dict()["profile"]
    assert profile["datasetStorageGb"] == 7
    assert "dataset_storage_gb" not in profile
