"""The offline engine: run a stack program against a simulated cloud, get its graph.

graph = aistack.engine.run(program, config={"aws:region": "us-east-1"})
graph = aistack.engine.run_project("stacks/reference", stack="dev")
"""

from aistack.engine.cloud import SimulatedCloud, UnknownInvokeError
from aistack.engine.graph import Resource, StackGraph
from aistack.engine.runner import load_stack_config, read_project, run, run_project

__all__ = [
    "Resource",
    "SimulatedCloud",
    "StackGraph",
    "UnknownInvokeError",
    "load_stack_config",
    "read_project",
    "run",
    "run_project",
]
