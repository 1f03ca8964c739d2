"""Construction through the provider, with inputs shaped as a TypeScript program sends them.

What a non-Python program's inputs look like when they reach `ComponentProvider.construct`
(pulumi 3.272, measured: ../shared/research/gcp-k8s.md §0.1 and §F2): camelCase keys as in
the schema, nested objects as dicts, every number a float (`maxNodes: 4` arrives as 4.0;
`map_input_properties` converts integers and then overwrites the result with the float), and
an Output wherever the program passed another resource's output.
"""

import json

import pulumi
import pytest
from pulumi.errors import InputPropertyError
from pulumi.provider.server import ComponentInitError

from aistack import aws, engine
from aistack.errors import ConfigError
from tests.aws.conftest import GOVERNANCE
from tests.aws.training_platform import DATASET
from tests.components.yaml_program import as_the_engine_sends

CONFIG = {"aws:region": "us-east-1"}
# The governance block as TypeScript writes it: no integers in it, camelCase as in the schema.
TS_GOVERNANCE = GOVERNANCE


_floats = as_the_engine_sends


def _shape(graph):
    """What must match between two graphs: every resource's identity, place, inputs and
    dependencies."""
    return sorted(
        (r.urn, r.parent or "", json.dumps(r.inputs, sort_keys=True), sorted(r.dependencies))
        for r in graph
    )


BUCKET = {"kind": "dataset", "region": "us-east-1", "governance": GOVERNANCE, "dataset": DATASET}


def test_dataset_bucket_through_the_provider_registers_the_python_graph(provider):
    inputs = _floats({**BUCKET, "noncurrentDays": 45, "keepNoncurrentVersions": 4})
    assert inputs["noncurrentDays"] == 45.0

    via_provider = engine.run(
        lambda: provider.construct("data", "aistack:index:AwsDatasetBucket", inputs, None),
        config=CONFIG,
    )
    via_python = engine.run(
        lambda: aws.DatasetBucket(
            "data", {**BUCKET, "noncurrentDays": 45, "keepNoncurrentVersions": 4}
        ),
        config=CONFIG,
    )
    assert _shape(via_provider) == _shape(via_python)
    bucket = via_provider.named("data")
    assert bucket.type == "aistack:index:AwsDatasetBucket"  # no wrapper level in between
    lifecycle = via_provider.named("data-lifecycle").get("rules", 0)
    assert lifecycle["noncurrentVersionExpiration"]["noncurrentDays"] == 45
    assert via_provider.named("data-bucket").parent == bucket.urn


def test_construct_returns_the_outputs_the_schema_declares(provider):
    results = {}

    def program():
        result = provider.construct("data", "aistack:index:AwsDatasetBucket", _floats(BUCKET), None)
        results.update(result.state)
        pulumi.Output.all(result.state["bucketArn"], result.state["uri"]).apply(
            lambda values: results.update(resolved=values)
        )

    engine.run(program, config=CONFIG)
    assert set(results) >= {"bucketName", "bucketArn", "kmsKeyArn", "uri"}
    arn, uri = results["resolved"]
    assert arn.startswith("arn:aws:s3:::") and uri.startswith("s3://")


def test_access_logs_wire_by_bucket_name(provider):
    def program():
        logs = aws.DatasetBucket(
            "logs", {"kind": "logs", "region": "us-east-1", "governance": GOVERNANCE}
        )
        provider.construct(
            "data",
            "aistack:index:AwsDatasetBucket",
            {**_floats(BUCKET), "accessLogsBucketName": logs.bucket_name},
            None,
        )

    graph = engine.run(program, config=CONFIG)
    logging = graph.named("data-access-logs")
    assert logging.get("targetBucket") == graph.named("logs-bucket").outputs["bucket"]
    assert logging.get("targetPrefix") == "s3-access/data/"


def _error(build):
    with pytest.raises(Exception) as caught:
        engine.run(build, config=CONFIG)
    error = caught.value
    return error.inner if isinstance(error, ComponentInitError) else error


def test_a_fractional_integer_is_the_python_callers_config_error(provider):
    inputs = {**_floats(BUCKET), "noncurrentDays": 4.5}
    through_provider = _error(
        lambda: provider.construct("data", "aistack:index:AwsDatasetBucket", inputs, None)
    )
    from_python = _error(lambda: aws.DatasetBucket("data", {**BUCKET, "noncurrentDays": 4.5}))
    assert isinstance(through_provider, ConfigError)
    assert str(through_provider) == str(from_python)
    assert "\n" not in str(through_provider)
    assert str(through_provider).startswith("Invalid configuration: data.noncurrentDays:")


def test_a_region_outside_governance_is_the_python_callers_config_error(provider):
    inputs = {**_floats(BUCKET), "region": "eu-west-1"}
    through_provider = _error(
        lambda: provider.construct("data", "aistack:index:AwsDatasetBucket", inputs, None)
    )
    from_python = _error(lambda: aws.DatasetBucket("data", {**BUCKET, "region": "eu-west-1"}))
    assert isinstance(through_provider, ConfigError)
    assert str(through_provider) == str(from_python)


def test_a_boolean_for_an_integer_is_refused(provider):
    inputs = {**_floats(BUCKET), "noncurrentDays": True}
    error = _error(
        lambda: provider.construct("data", "aistack:index:AwsDatasetBucket", inputs, None)
    )
    assert isinstance(error, ConfigError)
    assert "data.noncurrentDays" in str(error)


def test_missing_inputs_and_unknown_choices_are_refused_by_the_provider_first(provider):
    # The provider checks the schema before aistack runs (ComponentProvider.map_inputs);
    # typed SDKs refuse both at compile time.
    missing = {k: v for k, v in _floats(BUCKET).items() if k != "region"}
    with pytest.raises(InputPropertyError, match="Missing required input 'region'"):
        engine.run(
            lambda: provider.construct("data", "aistack:index:AwsDatasetBucket", missing, None),
            config=CONFIG,
        )
    unknown = {**_floats(BUCKET), "kind": "datasets"}
    with pytest.raises(InputPropertyError, match="Invalid value datasets"):
        engine.run(
            lambda: provider.construct("data", "aistack:index:AwsDatasetBucket", unknown, None),
            config=CONFIG,
        )
