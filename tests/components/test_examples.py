"""The YAML and TypeScript examples use the package as its schema says, and the YAML program
builds offline: each resource constructed through the provider in order, `${...}` replaced
by the outputs construct returned, as the YAML runtime does."""

import json
import re
from pathlib import Path

import pytest
import yaml

from aistack import engine
from tests.components import yaml_program
from tests.components.conftest import COMPONENTS_DIR
from tests.components.test_construct import CONFIG

EXAMPLES = COMPONENTS_DIR / "examples"


def _schema() -> dict:
    return json.loads((COMPONENTS_DIR / "schema.json").read_text())


def _program(example: str = "yaml") -> dict:
    return yaml_program.load(EXAMPLES / example / "Pulumi.yaml")


@pytest.mark.parametrize("example", ["yaml", "yaml-kubernetes"])
def test_yaml_example_uses_only_schema_inputs_and_sets_every_required_one(example):
    resources = _schema()["resources"]
    for name, resource in _program(example)["resources"].items():
        spec = resources[resource["type"]]
        given = set(resource["properties"])
        assert given <= set(spec["inputProperties"]), (name, given - set(spec["inputProperties"]))
        assert set(spec["requiredInputs"]) <= given, (name, set(spec["requiredInputs"]) - given)


def test_yaml_example_builds_the_pool_through_the_package(provider):
    graph = engine.run(lambda: yaml_program.build(provider, _program()), config=CONFIG)
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


def test_yaml_kubernetes_example_queues_the_namespace_it_creates(provider):
    graph = engine.run(lambda: yaml_program.build(provider, _program("yaml-kubernetes")))
    namespace = graph.named("nlp-train-namespace").inputs["metadata"]
    assert namespace["name"] == "nlp-train"
    assert namespace["labels"]["aistack.dev/tier"] == "train"
    (local,) = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")
    assert local.inputs["metadata"]["namespace"] == "nlp-train"
    (cluster_queue,) = graph.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    selector = cluster_queue.inputs["spec"]["namespaceSelector"]["matchExpressions"][0]
    assert selector["values"] == ["nlp-train"]


def test_examples_name_the_package_add_line():
    for example in ("yaml", "yaml-kubernetes", "typescript"):
        text = (EXAMPLES / example / "Pulumi.yaml").read_text()
        assert "pulumi package add ../.." in text
        assert yaml.safe_load(text)["packages"] == {"aistack": "../.."}
        assert (EXAMPLES / example / "../..").resolve() == Path(COMPONENTS_DIR).resolve()
