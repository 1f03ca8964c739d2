"""K8sTrainingQueue through the provider: a TypeScript-shaped program (camelCase, numbers as
floats, namespaces by name, the pools' flavors as plain objects) gets the graph the Python
API builds, the outputs the schema declares, and the Python caller's ConfigError."""

import pytest
from pulumi.provider.experimental.component import ComponentInitError

from aistack import engine, k8s
from aistack.errors import ConfigError
from tests.components.test_construct import _floats
from tests.k8s.conftest import GOVERNANCE
from tests.k8s.test_training_queue import KARPENTER_FLAVORS

QUEUE = {
    "governance": GOVERNANCE,
    "namespaces": ["ml-train", "ml-eval"],
    "flavors": KARPENTER_FLAVORS,
    "workloadPriorities": {"high": 1000, "low": 100},
    "apiVersion": "v1beta1",
    "cohort": "research",
}
OUTPUTS = {
    "clusterQueueName",
    "localQueueNames",
    "workloadPriorityClassNames",
    "priorityClassNames",
    "stopCommand",
    "resumeCommand",
}


def test_training_queue_through_the_provider_registers_the_python_graph(provider):
    state: dict = {}

    def through_provider():
        result = provider.construct("it", "aistack:index:K8sTrainingQueue", _floats(QUEUE), None)
        state.update(result.state)

    ours = {r.urn: r for r in engine.run(through_provider)}
    theirs = {r.urn: r for r in engine.run(lambda: k8s.TrainingQueue("it", QUEUE))}
    assert sorted(ours) == sorted(theirs)
    for urn, resource in ours.items():
        assert resource.inputs == theirs[urn].inputs, urn
        assert resource.parent == theirs[urn].parent, urn
    assert set(state) >= OUTPUTS, OUTPUTS - set(state)


def _error(build):
    with pytest.raises(Exception) as caught:
        engine.run(build)
    error = caught.value
    return error.inner if isinstance(error, ComponentInitError) else error


def test_an_infinite_quota_is_the_python_callers_config_error(provider):
    bad = {**QUEUE, "flavors": [{**KARPENTER_FLAVORS[0], "gpus": 1_000_000_000}]}
    from_provider = _error(
        lambda: provider.construct("it", "aistack:index:K8sTrainingQueue", _floats(bad), None)
    )
    from_python = _error(lambda: k8s.TrainingQueue("it", bad))
    assert isinstance(from_provider, ConfigError), from_provider
    assert str(from_provider) == str(from_python)
    assert "it.flavors.0.gpus" in str(from_provider)
