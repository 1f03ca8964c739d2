"""The YAML and TypeScript examples use the package as its schema says, and the YAML program
builds offline: each resource constructed through the provider in order, `${...}` replaced
by the outputs construct returned, as the YAML runtime does."""

import json
import re
from pathlib import Path

import pulumi
import yaml

from aistack import engine
from tests.components.conftest import COMPONENTS_DIR
from tests.components.test_construct import CONFIG, _floats

EXAMPLES = COMPONENTS_DIR / "examples"
REFERENCE = re.compile(r"^\$\{(\w+)(?:\.(\w+))?(?:\[\"([\w-]+)\"\])?\}$")


def _schema() -> dict:
    return json.loads((COMPONENTS_DIR / "schema.json").read_text())


def _program() -> dict:
    return yaml.safe_load((EXAMPLES / "yaml" / "Pulumi.yaml").read_text())


def test_yaml_example_uses_only_schema_inputs_and_sets_every_required_one():
    resources = _schema()["resources"]
    for name, resource in _program()["resources"].items():
        spec = resources[resource["type"]]
        given = set(resource["properties"])
        assert given <= set(spec["inputProperties"]), (name, given - set(spec["inputProperties"]))
        assert set(spec["requiredInputs"]) <= given, (name, set(spec["requiredInputs"]) - given)


def _resolve(value, variables, outputs):
    if isinstance(value, str) and (match := REFERENCE.match(value)):
        head, prop, key = match.groups()
        if prop is None:
            return variables[head]
        found = outputs[head][prop]
        if key is None:
            return found
        return pulumi.Output.from_input(found).apply(lambda values: values[key])
    if isinstance(value, dict):
        return {k: _resolve(v, variables, outputs) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, variables, outputs) for v in value]
    return value


def test_yaml_example_builds_the_pool_through_the_package(provider):
    program_yaml = _program()
    variables = program_yaml["variables"]

    def program():
        outputs: dict = {}
        for name, resource in program_yaml["resources"].items():
            inputs = _resolve(_floats(resource["properties"]), variables, outputs)
            outputs[name] = provider.construct(name, resource["type"], inputs, None).state

    graph = engine.run(program, config=CONFIG)
    assert graph.named("pool").type == "aistack:index:AwsTrainingPool"
    compute = graph.named("pool-compute").inputs["computeResources"]
    assert sorted(compute["subnets"]) == sorted(
        r.id
        for r in graph.of_type("aws:ec2/subnet:Subnet")
        if r.name.startswith("network-training")
    )
    job = json.loads(graph.named("pool-job").inputs["containerProperties"])
    env = {item["name"]: item["value"] for item in job["environment"]}
    assert env["AISTACK_DATASET_VERSION"] == "2024-06-01"
    assert env["AISTACK_DATASET_URI"].startswith("s3://data-")


def test_typescript_example_uses_the_packages_classes_and_required_inputs():
    source = (EXAMPLES / "typescript" / "index.ts").read_text()
    resources = _schema()["resources"]
    used = set(re.findall(r"new aistack\.(\w+)\(", source))
    assert used == {"AwsNetwork", "AwsWorkloadIdentity", "AwsDatasetBucket", "AwsTrainingPool"}
    (block,) = re.findall(r"new aistack\.AwsTrainingPool\(\"\w+\", \{(.*?)\n\}\);", source, re.S)
    keys = set(re.findall(r"^\s{4}(\w+)[:,]", block, re.M))
    spec = resources["aistack:index:AwsTrainingPool"]
    assert keys <= set(spec["inputProperties"])
    assert set(spec["requiredInputs"]) <= keys
    kinds = _schema()["types"]["aistack:index:AwsDatasetBucketKind"]["enum"]
    assert set(re.findall(r'kind: "(\w+)"', source)) <= {k["value"] for k in kinds}


def test_examples_name_the_package_add_line():
    for example in ("yaml", "typescript"):
        text = (EXAMPLES / example / "Pulumi.yaml").read_text()
        assert "pulumi package add ../.." in text
        assert yaml.safe_load(text)["packages"] == {"aistack": "../.."}
        assert (EXAMPLES / example / "../..").resolve() == Path(COMPONENTS_DIR).resolve()
