"""AIS-S2-01: serving nodes run an optimised inference runtime from an image pinned by digest.

A general-purpose web server around a model wastes most of the GPU: vLLM, Triton and
TensorRT-LLM batch requests continuously and manage the KV cache, which is where serving
throughput comes from. The image must be pinned by digest, so what serves is what was
tested. What a node serves is read from its launch template's `aistack:serving-image` tag
(set by aws.InferenceTier), and the runtime from the image name (vllm, tritonserver,
tensorrt-llm) or an explicit `aistack:runtime` tag for images built on one of them.
Which launch templates serve is `aistack.queries.aws_serving.serving_templates`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aistack.contracts.aws import RUNTIME_TAG, SERVING_IMAGE_TAG
from aistack.contracts.images import reference_problem
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_serving import serving_templates

OPTIMISED_RUNTIMES = frozenset({"vllm", "triton", "tensorrt-llm"})
_RUNTIME_IN_NAME = re.compile(r"vllm|tritonserver|tensorrt-?llm|trtllm")


def serving_image_problem(template: Resource) -> str | None:
    """Why the template's serving image is not a pinned, optimised runtime; None if it is."""
    found = tags(template)
    image = found.get(SERVING_IMAGE_TAG)
    if not image:
        return (
            f"does not say which image it serves (no {SERVING_IMAGE_TAG} tag), so neither "
            "the runtime nor the pin can be checked"
        )
    problem = reference_problem(image)
    if problem is not None:
        return problem
    name = image.split("@", 1)[0].rsplit(":", 1)[0].lower()
    runtime = found.get(RUNTIME_TAG, "").lower()
    if runtime not in OPTIMISED_RUNTIMES and not _RUNTIME_IN_NAME.search(name):
        return (
            f"image {name} is not a known optimised runtime (vLLM, Triton, TensorRT-LLM) and "
            f"carries no {RUNTIME_TAG} tag naming one"
        )
    return None


def _checks(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        problem = serving_image_problem(template)
        if problem:
            yield fail(template, f"serving template {problem}.")
        else:
            image = tags(template)[SERVING_IMAGE_TAG]
            yield ok(template, f"serves {image.split('@', 1)[0]} pinned by digest.")


@rule(
    id="AIS-S2-01",
    checklist=["S2"],
    info="Serving nodes run vLLM, Triton or TensorRT-LLM from an image pinned by digest.",
    why="Optimised runtimes batch continuously and manage the KV cache, which is most of "
    "serving throughput per GPU; a digest makes what serves exactly what was tested.",
    fix="Use aws.InferenceTier with runtime vllm, triton or tensorrt-llm and image "
    "'repo@sha256:...'; on your own launch templates set the aistack:serving-image tag to the "
    "pinned image (and aistack:runtime when its name does not say the runtime).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    yield from _checks(graph)
