"""AwsAuditTrail through the provider: the personal-data buckets arrive as a list of
bucketArn Outputs, and the trail records the same data events as a Python trail given the
bucket objects."""

import importlib

import pulumi
import pytest
from aistack_components import adapters
from pulumi.provider.server import ComponentInitError

from aistack import aws, engine
from aistack._registry import PLATFORMS
from aistack.errors import ConfigError
from tests.aws.conftest import GOVERNANCE
from tests.components.test_construct import BUCKET, CONFIG, _floats, _shape

TRAIL = {"governance": GOVERNANCE, "region": "us-east-1"}


def test_the_trail_records_the_buckets_given_by_arn_as_python_does(provider):
    def through_provider():
        data = aws.DatasetBucket("data", BUCKET)
        inputs = {**_floats(TRAIL), "dataBucketArns": [data.bucket_arn]}
        provider.construct("audit", "aistack:index:AwsAuditTrail", inputs, None)

    def from_python():
        data = aws.DatasetBucket("data", BUCKET)
        aws.AuditTrail("audit", TRAIL, data_buckets=[data])

    via_provider = engine.run(through_provider, config=CONFIG)
    assert _shape(via_provider) == _shape(engine.run(from_python, config=CONFIG))
    selectors = via_provider.named("audit-trail").get("advancedEventSelectors")
    arns = [
        f["startsWiths"]
        for s in selectors
        for f in s["fieldSelectors"]
        if f["field"] == "resources.ARN"
    ]
    assert arns == [[via_provider.named("data-bucket").outputs["arn"] + "/"]]


def test_a_list_that_is_itself_an_output_is_refused_with_the_fix(provider):
    def program():
        data = aws.DatasetBucket("data", BUCKET)
        arns = pulumi.Output.all(data.bucket_arn)
        inputs = {**_floats(TRAIL), "dataBucketArns": arns}
        provider.construct("audit", "aistack:index:AwsAuditTrail", inputs, None)

    with pytest.raises(Exception) as caught:
        engine.run(program, config=CONFIG)
    error = caught.value.inner if isinstance(caught.value, ComponentInitError) else caught.value
    assert isinstance(error, ConfigError)
    assert "audit.dataBucketArns" in str(error) and "list literal" in str(error)


# Reading every export reads the deprecated aliases too, which warn by design.
@pytest.mark.filterwarnings("ignore:.* is now aistack.contracts:DeprecationWarning")
def test_every_exported_component_has_an_adapter():
    # A component exported by aistack.aws, .gcp or .k8s but missing from the package would
    # be invisible to TypeScript, Go and YAML programs. The platforms come from the registry
    # (aistack/_registry.py); the exports are read as a program sees them.
    built = {adapter._component for adapter in adapters.COMPONENTS}
    missing = [
        f"aistack.{platform}.{name}"
        for platform in PLATFORMS
        for package in [importlib.import_module(f"aistack.{platform}")]
        for name in package.__all__
        if isinstance(value := getattr(package, name), type)
        and issubclass(value, pulumi.ComponentResource)
        and value not in built
    ]
    assert missing == []
