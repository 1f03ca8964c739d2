"""AwsKarpenterGpuPool through the provider: a TypeScript-shaped program (every number a
float) registers the graph the Python API builds, and gets the outputs the schema declares
(the queue name for Karpenter's settings.interruptionQueue among them)."""

from aistack import aws, engine
from tests.aws.test_karpenter_gpu_pool import POOL_ARGS
from tests.components.test_construct import CONFIG, _floats, _shape

ARGS = POOL_ARGS


def test_the_pool_through_the_provider_registers_the_python_graph(provider):
    state = {}

    def through_provider():
        result = provider.construct("gpu", "aistack:index:AwsKarpenterGpuPool", _floats(ARGS), None)
        state.update(result.state)

    via_provider = engine.run(through_provider, config=CONFIG)
    via_python = engine.run(lambda: aws.KarpenterGpuPool("gpu", ARGS), config=CONFIG)
    assert _shape(via_provider) == _shape(via_python)
    assert {
        "interruptionQueueName",
        "interruptionQueueArn",
        "nodeRoleName",
        "nodeRoleArn",
        "nodePoolNames",
        "nodeClassName",
    } <= set(state)
