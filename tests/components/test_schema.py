"""The package schema: inferred offline, checked in, and faithful to the pydantic Args."""

import json
import sys

import pytest
from aistack_components import adapters, codegen
from pydantic.alias_generators import to_camel

from tests.components.conftest import COMPONENTS_DIR

TOKENS = [f"aistack:index:{name}" for name in codegen.CONFIGS]
#: Inputs that wire one component to another (ids and ARNs): never plain, so a TypeScript
#: or Go caller can pass another component's Output.
WIRING = {
    "AwsDatasetBucket": {"accessLogsBucketName"},
    "AwsAuditTrail": {"dataBucketArns"},
    "AwsTrainingPool": {
        "alarmTopicArn",
        "subnetIds",
        "securityGroupId",
        "instanceRoleArn",
        "instanceProfileArn",
        "jobRoleArn",
        "datasetBucketName",
        "datasetBucketArn",
        "datasetKmsKeyArn",
        "checkpointsBucketName",
        "checkpointsBucketArn",
        "checkpointsKmsKeyArn",
    },
    "AwsNotebook": {"vpcId", "subnetIds", "securityGroupIds", "executionRoleArn", "kmsKeyId"},
    "AwsInferenceTier": {
        "alarmTopicArn",
        "vpcId",
        "subnetIds",
        "securityGroupId",
        "albSubnetIds",
        "albSecurityGroupId",
        "instanceRoleArn",
        "instanceProfileArn",
        "modelsBucketName",
        "modelsBucketArn",
        "modelsKmsKeyArn",
    },
    "GcpDatasetBucket": {"enabledServices", "accessLogsBucketName"},
    "GcpWorkloadIdentity": {"enabledServices", "clusterId"},
    "GcpContainerRegistry": {"enabledServices"},
    "GcpAuditLogs": {"enabledServices"},
    "GcpBudgetGuard": {"enabledServices", "accessLogsBucketName"},
    "GcpGpuQuota": {"enabledServices"},
    # A plain map (its keys are checked against the tiers) of Outputs (e-mails).
    "GcpNetwork": {"enabledServices", "serviceAccounts"},
    "GcpGkeCluster": {"enabledServices"},
    "GcpGpuNodePool": {"clusterId", "nodeServiceAccountEmail", "nodeDiskKey"},
    "GcpNotebook": {
        "enabledServices",
        "networkSelfLink",
        "notebookSubnetSelfLink",
        "serviceAccountEmail",
        "datasetBucketName",
    },
    "GcpTrainingPool": {
        "enabledServices",
        "notificationChannels",
        "trainingSubnetSelfLink",
        "trainingServiceAccountEmail",
        "datasetBucketName",
        "checkpointsBucketName",
    },
    "GcpInferenceTier": {
        "enabledServices",
        "notificationChannels",
        "networkId",
        "inferenceSubnetSelfLink",
        "inferenceServiceAccountEmail",
        "modelsBucketName",
    },
    # A plain map (its keys are checked against serviceAccounts) of Outputs (e-mails, ARNs).
    "K8sTeamNamespace": {"identities"},
}
#: Wiring the component needs while it builds (written into a node's configuration, or into
#: names and checks): plain.
PLAIN_WIRING = {
    "AwsInferenceTier": {"vpcCidrBlock"},
    "GcpDatasetBucket": {"project"},
    "GcpWorkloadIdentity": {"project"},
    "GcpContainerRegistry": {"project"},
    "GcpAuditLogs": {"project"},
    "GcpBudgetGuard": {"project"},
    "GcpGpuQuota": {"project"},
    "GcpNetwork": {"project", "datasetRegion"},
    "GcpGkeCluster": {"project"},
    "GcpGpuNodePool": {"project", "clusterRegion"},
    "GcpNotebook": {"project", "networkRegion", "datasetRegion"},
    "GcpTrainingPool": {"project", "trainingZones", "trainingHealthCheckPort"},
    "GcpInferenceTier": {"project", "inferenceZones", "gatewayPort", "proxySubnetCidr"},
}


@pytest.fixture(scope="module")
def schema(provider):
    return json.loads(provider.schema)


def test_checked_in_schema_is_the_one_the_adapters_infer():
    assert (COMPONENTS_DIR / "schema.json").read_text() == codegen.render_schema(
        adapters.COMPONENTS
    ), "components/schema.json is stale: run `make schema`"


def test_generated_typeddicts_match_the_pydantic_args():
    assert codegen.ARGS_FILE.read_text() == codegen.render_args(), (
        "components/aistack_components/args.py differs from the Args: run `make schema`"
    )


def test_every_component_is_exported_under_its_python_token(schema):
    assert sorted(schema["resources"]) == sorted(TOKENS)
    assert schema["dependencies"] == []  # no resource references to pulumi-aws's schema


@pytest.mark.parametrize("name", list(codegen.CONFIGS))
def test_required_inputs_are_the_args_required_fields(schema, name):
    resource = schema["resources"][f"aistack:index:{name}"]
    model = codegen.args_model(name)
    required = {to_camel(field) for field, info in model.model_fields.items() if info.is_required()}
    fields = {to_camel(field) for field in model.model_fields}
    extra_wiring = (WIRING.get(name, set()) | PLAIN_WIRING.get(name, set())) - fields
    assert set(resource["requiredInputs"]) - extra_wiring == required
    # Every Args field is an input, none more except the wiring.
    assert set(resource["inputProperties"]) - extra_wiring == fields


@pytest.mark.parametrize("name", list(codegen.CONFIGS))
def test_configuration_is_plain_and_wiring_takes_outputs(schema, name):
    inputs = schema["resources"][f"aistack:index:{name}"]["inputProperties"]
    wiring = WIRING.get(name, set())
    for key, spec in inputs.items():
        if key in wiring:
            # A list or map of ids: the whole, or each of its items, may be an Output.
            items = spec.get("items", spec.get("additionalProperties", {}))
            assert not (spec.get("plain") and items.get("plain")), key
        else:
            assert spec.get("plain") is True, key


def test_choices_are_enums_with_the_literal_values(schema):
    kind = schema["types"]["aistack:index:AwsDatasetBucketKind"]
    from typing import get_args

    from aistack.aws import DatasetBucketArgs

    kinds = list(get_args(DatasetBucketArgs.model_fields["kind"].annotation))
    assert "dataset" in kinds and "checkpoints" in kinds
    assert [v["value"] for v in kind["enum"]] == kinds
    bucket = schema["resources"]["aistack:index:AwsDatasetBucket"]["inputProperties"]
    assert bucket["kind"]["$ref"] == "#/types/aistack:index:AwsDatasetBucketKind"
    scheduler = schema["types"]["aistack:index:AwsTrainingPoolScheduler"]
    assert {v["value"] for v in scheduler["enum"]} == {"batch", "asg"}


def test_defaults_are_documented_since_the_schema_cannot_carry_pydantic_ones(schema):
    pool = schema["resources"]["aistack:index:AwsTrainingPool"]["inputProperties"]
    assert "Default: 30." in pool["idleMinutes"]["description"]
    assert (
        "idleMinutes" not in schema["resources"]["aistack:index:AwsTrainingPool"]["requiredInputs"]
    )


def test_outputs_are_outputs_only(schema):
    pool = schema["resources"]["aistack:index:AwsTrainingPool"]["properties"]
    assert pool["jobQueueArn"] == {"type": "string"}
    network = schema["resources"]["aistack:index:AwsNetwork"]["properties"]
    assert network["trainingSubnetIds"]["type"] == "array"
    identity = schema["resources"]["aistack:index:GcpWorkloadIdentity"]["properties"]
    assert identity["emails"]["type"] == "object"
    assert identity["emails"]["additionalProperties"]["type"] == "string"


def test_team_identities_are_a_plain_map_of_outputs(schema):
    # The names are checked while the namespace builds; the e-mails and ARNs are Outputs.
    spec = schema["resources"]["aistack:index:K8sTeamNamespace"]["inputProperties"]["identities"]
    assert spec["plain"] is True
    assert spec["type"] == "object"
    assert "plain" not in spec["additionalProperties"]


def test_importing_the_host_starts_no_server(monkeypatch):
    # Pulumi's analyzer imports the plugin's modules; only `python components/` serves.
    # The host's code run as an import would run it (runpy runs the file afresh), with
    # the server replaced by one that fails the test if it is started.
    import runpy

    import pulumi.provider

    def serve(provider, args):
        raise AssertionError("importing the host started the server")

    monkeypatch.setattr(pulumi.provider, "main", serve)
    runpy.run_path(str(COMPONENTS_DIR / "__main__.py"))


def test_the_host_serves_the_checked_in_schema_and_leaves_parsing_as_it_was(monkeypatch):
    # `python components/` as Pulumi runs it, with the gRPC server replaced by a recorder:
    # the provider it would serve has the schema `make schema` wrote, and the analyzer's
    # parse cache is gone before serving starts.
    import ast
    import inspect
    import runpy

    import pulumi.provider

    served = []
    parse, finder = ast.parse, inspect._ClassFinder

    def record(provider, args):
        served.append(provider)
        assert ast.parse is parse, "ast.parse still patched while the server runs"
        assert inspect._ClassFinder is finder, "inspect's class finder still patched"

    monkeypatch.setattr(pulumi.provider, "main", record)
    monkeypatch.setattr(sys, "argv", ["components", "127.0.0.1:0"])
    runpy.run_path(str(COMPONENTS_DIR / "__main__.py"), run_name="__main__")
    assert len(served) == 1
    schema = json.loads(served[0].schema)
    assert json.dumps(schema, indent=2, sort_keys=True) + "\n" == codegen.SCHEMA_FILE.read_text()


CLASSES = """
import dataclasses


class Top:
    class Inner:
        pass


@dataclasses.dataclass
class Decorated:
    x: int = 0


def factory():
    class Local:
        pass

    return Local


if True:
    class Twice:
        first = True
else:
    class Twice:
        first = False
"""


def test_a_class_is_found_in_its_source_where_inspect_finds_it(tmp_path, monkeypatch):
    # sources_parsed_once answers inspect's class lookups from one walk of each tree: the
    # same lines for nested, decorated, local and twice-defined classes (the first wins).
    import importlib
    import inspect

    (tmp_path / "classes_probe.py").write_text(CLASSES)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("classes_probe")
    classes = [module.Top, module.Top.Inner, module.Decorated, module.factory(), module.Twice]
    expected = [inspect.findsource(cls)[1] for cls in classes]
    with codegen.sources_parsed_once():
        found = [inspect.findsource(cls)[1] for cls in classes]
        with pytest.raises(OSError, match="could not find class definition"):
            inspect.findsource(type("Elsewhere", (), {"__module__": "classes_probe"}))
    assert found == expected
    assert (
        expected[0] < expected[1] and CLASSES.splitlines()[expected[2]] == "@dataclasses.dataclass"
    )
