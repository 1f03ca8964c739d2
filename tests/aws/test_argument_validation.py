"""Component arguments: one ConfigError in one pass, before anything is registered.

Schema and semantic problems are reported together, each with its field path and a fix in
our words; a bad field does not cascade into false problems; typed Args and dicts raise the
same error; Outputs and missing wiring are named with the keyword to use.
"""

import pulumi
import pytest

from aistack import aws as aistack_aws
from aistack import engine
from aistack.errors import ConfigError

from .training_platform import DATASET, DIGEST
from .training_platform import training_platform as _platform


def training_platform(governance, **pool):
    """The shared platform with the network sized independently of the pool's arguments,
    so every problem reported is the pool's own."""
    return _platform(governance, network_instance_types=["g5.12xlarge"], **pool)


def _error(program) -> ConfigError:
    """The ConfigError a program raises, after checking nothing was registered for the
    component that raised it (the others before it are the program's own)."""
    with pytest.raises(ConfigError) as caught:
        engine.run(program)
    return caught.value


def test_a_typo_an_unknown_gpu_type_and_a_region_problem_are_reported_together(governance):
    error = _error(
        lambda: training_platform(
            governance,
            maxNodess=4,
            instanceTypes=["g5.12xlarge", "g9.huge"],
            region="us-west-2",  # the data is in us-east-1 (D2)
        )
    )
    fields = error.fields
    assert "train.maxNodess" in fields
    assert "train.instanceTypes[1]" in fields
    assert "train.region" in fields
    typo = error.problems[fields.index("train.maxNodess")]
    assert typo.fix == "did you mean 'maxNodes'?"


def test_a_region_outside_governance_is_reported_with_a_typo(governance):
    narrow = {**governance, "allowedRegions": ["us-east-1"]}
    error = _error(
        lambda: aistack_aws.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": "us-west-2",
                "governance": narrow,
                "dataset": DATASET,
                "kindd": "x",
            },
        )
    )
    assert sorted(error.fields) == ["data.kindd", "data.region"]


def test_no_resource_of_the_pool_is_registered_when_its_arguments_are_wrong(governance):
    def program():
        with pytest.raises(ConfigError):
            training_platform(governance, maxNodes=0)

    graph = engine.run(program)
    assert graph.of_type("aws:s3/bucket:Bucket"), "the pool's dependencies were registered"
    assert not graph.of_type("aistack:index:AwsTrainingPool")
    assert not [r for r in graph.resources if r.name.startswith("train-")]


def test_a_bad_value_does_not_cascade_into_false_problems(governance):
    # maxNodes is wrong; the check "minNodes exceeds maxNodes" must not fire on a default.
    error = _error(lambda: training_platform(governance, maxNodes="four", minNodes=0))
    assert error.fields == ["train.maxNodes"]
    assert error.problems[0].message == "expected a whole number, got the text 'four'."


@pytest.mark.parametrize(
    ("settings", "field", "message"),
    [
        ({"maxNodes": True}, "train.maxNodes", "expected a whole number, got true."),
        ({"maxNodes": 4.5}, "train.maxNodes", "expected a whole number, got 4.5."),
        ({"instanceTypes": "g5.12xlarge"}, "train.instanceTypes", "expected a list"),
        ({"market": "cheap"}, "train.market", "must be one of 'spot' or 'on-demand'"),
        ({"maxNodes": 0}, "train.maxNodes", "must be at least 1, got 0."),
    ],
    ids=["bool-for-int", "fraction-for-int", "text-for-list", "bad-choice", "too-small"],
)
def test_messages_say_what_was_given_and_how_to_fix_it(governance, settings, field, message):
    error = _error(lambda: training_platform(governance, **settings))
    assert error.fields == [field]
    problem = error.problems[0]
    assert message in problem.message
    assert problem.fix
    for jargon in ("Input should be", "valid tuple", "unable to parse"):
        assert jargon not in problem.render()


def test_a_whole_float_is_an_integer_as_other_languages_send_it(run, governance):
    graph = run(lambda: training_platform(governance, maxNodes=4.0))
    compute = graph.of_type("aws:batch/computeEnvironment:ComputeEnvironment")[0]
    assert compute.inputs["computeResources"]["maxVcpus"] == 4 * 48


def test_typed_args_raise_the_same_config_error_as_a_dict(governance):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.TrainingPoolArgs(
            governance=governance,
            region="us-east-1",
            instance_types=("g5.12xlarge",),
            max_nodes=0,
            image=DIGEST,
            max_runtime_minutes=720,
        )
    assert caught.value.fields == ["TrainingPoolArgs.max_nodes"]


def test_missing_wiring_is_named_before_anything_is_registered(governance):
    def program():
        data = aistack_aws.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": "us-east-1",
                "governance": governance,
                "dataset": DATASET,
            },
        )
        aistack_aws.TrainingPool(
            "train",
            {
                "governance": governance,
                "region": "us-east-1",
                "instanceTypes": ["g5.12xlarge"],
                "maxNodes": 1,
                "image": DIGEST,
                "maxRuntimeMinutes": 60,
            },
            network=None,
            identity=None,
            dataset=data,
            checkpoints=None,
        )

    error = _error(program)
    assert error.fields == ["train.network", "train.identity", "train.checkpoints"]
    assert "pass `network=`" in error.problems[0].fix


def test_an_output_in_the_args_points_at_the_keyword_that_takes_it(governance):
    def program():
        topic = pulumi.Output.from_input("arn:aws:sns:us-east-1:123456789012:alerts")
        training_platform(governance, alarmTopicArn=topic)

    error = _error(program)
    assert error.fields == ["train.alarmTopicArn"]
    assert "pulumi Output" in error.problems[0].message
    assert "`alarm_topic_arn=`" in error.problems[0].fix


def test_a_google_cloud_region_name_is_not_an_aws_region(governance):
    gcp_governance = {**governance, "allowedRegions": ["us-east1"]}
    error = _error(
        lambda: aistack_aws.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": "us-east1",
                "governance": gcp_governance,
                "dataset": DATASET,
            },
        )
    )
    assert error.fields == ["data.region"]
    assert "'us-east1' is not an AWS region" in error.problems[0].message
    assert "did you mean 'us-east-1'?" in error.problems[0].fix


def test_a_latest_model_version_is_one_problem_not_a_cascade():
    from .test_inference_tier import platform

    versions = [{"version": "latest", "weight": 100, "approvedBy": "ml-lead@example.com"}]
    # Without the training data and checkpoints buckets the tier is not given: the same
    # error, as for test_inference_tier's refusals (its `refusal` says why).
    error = _error(lambda: platform(versions=versions, with_training_data=False))
    assert error.fields == ["serve.versions.0.version"]
    assert "S7" in error.problems[0].message
    assert not any("at least" in problem.message for problem in error.problems)


def test_a_notebook_typo_and_its_missing_wiring_are_reported_together(governance):
    error = _error(
        lambda: aistack_aws.Notebook(
            "nb",
            {
                "governance": governance,
                "region": "us-east-1",
                "users": ["ana"],
                "idleTimeoutMinutess": 30,
            },
        )
    )
    typo = "nb.idleTimeoutMinutess"
    assert typo in error.fields
    assert "did you mean 'idleTimeoutMinutes'?" in error.problems[error.fields.index(typo)].fix
    # No network was wired: said in the same error, not after the typo is fixed.
    assert {"nb.vpcId", "nb.subnetIds"} <= set(error.fields)
