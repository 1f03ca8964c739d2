"""The guard of a module's shared graph fails when a test changes it."""

import pulumi
import pytest

from aistack import engine
from tests._harness.shared_graphs import shared


def _graph():
    return engine.run(lambda: pulumi.export("answer", {"value": 42}))


def test_an_unchanged_shared_graph_passes():
    with shared(_graph()) as graph:
        assert graph.stack_outputs == {"answer": {"value": 42}}


def test_a_changed_shared_graph_fails_at_teardown():
    changed = pytest.raises(AssertionError, match="changed a graph its module shares")
    with changed, shared(_graph()) as graph:
        graph.stack_outputs["answer"]["value"] = 43


def test_a_changed_resource_input_fails_too():
    import pulumi_aws as aws

    changed = pytest.raises(AssertionError, match="changed a graph its module shares")
    config = {"aws:region": "us-east-1"}
    with changed, shared(engine.run(lambda: aws.s3.Bucket("b"), config=config)) as graph:
        graph.resources[-1].inputs["tags"] = {"changed": "yes"}
