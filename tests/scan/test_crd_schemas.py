"""The strict CRD validator: pruning becomes refusal, int-or-string is honoured, and
preserved fields stay open. Proven on a small CRD written in the shape the API server
takes (apiextensions.k8s.io/v1), so the transform is tested apart from any operator."""

import pytest

from aistack.scan import crd_schemas
from aistack.scan.crd_schemas import _strict

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size]
            properties:
              size:
                x-kubernetes-int-or-string: true
              template:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  name: {type: string}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
"""


@pytest.fixture
def widget_schemas(tmp_path, monkeypatch):
    (tmp_path / "example-v1").mkdir()
    (tmp_path / "example-v1" / "example.com_widgets.yaml").write_text(CRD)
    monkeypatch.setattr(crd_schemas, "CRD_DIRECTORY", tmp_path)
    _clear_caches()
    yield
    _clear_caches()


def _clear_caches():
    crd_schemas.crd_schemas.cache_clear()
    crd_schemas._group_schemas.cache_clear()


def _widget(spec):
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
    }


def test_only_served_versions_are_kept_with_their_source(widget_schemas):
    found = crd_schemas.crd_schemas()
    assert set(found) == {("example.com/v1", "Widget")}
    assert found["example.com/v1", "Widget"].source == "example-v1/example.com_widgets.yaml"


def test_a_valid_object_has_no_errors(widget_schemas):
    assert crd_schemas.validate_custom_resource(_widget({"size": 3})) == []
    assert crd_schemas.validate_custom_resource(_widget({"size": "50%"})) == []


def test_an_unknown_field_is_refused_where_the_api_server_would_prune_it(widget_schemas):
    errors = crd_schemas.validate_custom_resource(_widget({"size": 3, "sise": 4}))
    assert len(errors) == 1
    assert errors[0].startswith("spec: Additional properties are not allowed ('sise'")


def test_preserved_unknown_fields_stay_open(widget_schemas):
    spec = {"size": 1, "template": {"name": "x", "anything": {"goes": True}}}
    assert crd_schemas.validate_custom_resource(_widget(spec)) == []


def test_int_or_string_refuses_other_types_and_required_fields_are_required(widget_schemas):
    assert crd_schemas.validate_custom_resource(_widget({"size": [1]})) != []
    assert crd_schemas.validate_custom_resource(_widget({})) == [
        "spec: 'size' is a required property"
    ]


def test_a_kind_without_a_kept_crd_is_an_error_not_a_pass(widget_schemas):
    document = {"apiVersion": "example.com/v2", "kind": "Widget", "spec": {}}
    assert crd_schemas.validate_custom_resource(document) == [
        "no CRD kept for example.com/v2 Widget"
    ]


def test_a_field_named_like_a_keyword_is_a_field():
    schema = {"type": "object", "properties": {"properties": {"type": "string"}}}
    assert _strict(schema) == {
        "type": "object",
        "properties": {"properties": {"type": "string"}},
        "additionalProperties": False,
    }


def test_every_kept_crd_directory_names_its_source():
    sources = (crd_schemas.CRD_DIRECTORY / "SOURCES.md").read_text()
    rows = {
        line.split("|")[1].strip().strip("`")
        for line in sources.splitlines()
        if line.startswith("| `")
    }
    directories = {p.name for p in crd_schemas.CRD_DIRECTORY.iterdir() if p.is_dir()}
    assert rows == directories


def test_every_kept_file_is_named_for_the_group_of_its_crds():
    # schema_for reads only the files of the object's API group: `<group>_<plural>.yaml`,
    # controller-gen's naming, which every kept upstream file follows.
    files = sorted(crd_schemas.CRD_DIRECTORY.rglob("*.yaml"))
    assert files
    for path in files:
        groups = {
            key[0].rpartition("/")[0]
            for key, found in crd_schemas.crd_schemas().items()
            if found.source == str(path.relative_to(crd_schemas.CRD_DIRECTORY))
        }
        assert groups == {path.name.split("_", 1)[0]}, path


def test_a_lookup_reads_only_its_groups_files():
    crd_schemas._group_schemas.cache_clear()
    found = crd_schemas.schema_for("kueue.x-k8s.io/v1beta2", "ClusterQueue")
    assert found is not None and found.source.startswith("kueue-")
    assert crd_schemas._group_schemas.cache_info().currsize == 1
