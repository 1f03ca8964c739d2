"""AIS-S2-03: serving VMs run vLLM, Triton or TensorRT-LLM from an image pinned by digest.

What a serving VM runs is read from its template: the `aistack-image` metadata and, where
the startup script is gcp.InferenceTier's, the model server's `docker run` arguments it
packs (`runtime.args`: the image, then the runtime's command). The runtime is named by an
`aistack-runtime` label, by the command (`tritonserver`, `trtllm-serve`, `vllm serve`, or
vLLM's OpenAI server flags after an image whose entrypoint is the server), or by the
image name.
"""

import re
from collections.abc import Iterator

from aistack.contracts.images import reference_problem
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import node_environment, serving_templates, startup_files

RUNTIME_LABEL = "aistack-runtime"
OPTIMISED = ("vllm", "triton", "tensorrt-llm")
_IN_NAME = re.compile(r"vllm|tritonserver|tensorrt-?llm|trtllm")
#: vLLM's OpenAI-compatible server takes these (vLLM docs, "vllm serve" arguments); Triton
#: and trtllm-serve (which spells it --tp_size) do not.
_VLLM_FLAGS = ("--served-model-name", "--tensor-parallel-size")


def _runtime_of(image: str, command: list[str], label: str) -> str | None:
    if label in OPTIMISED:
        return label
    first = command[0] if command else ""
    if first == "tritonserver":
        return "triton"
    if first == "trtllm-serve":
        return "tensorrt-llm"
    if first == "vllm" or (first.startswith("--") and all(f in command for f in _VLLM_FLAGS)):
        return "vllm"
    name = image.split("@", 1)[0].rsplit(":", 1)[0].lower()
    match = _IN_NAME.search(name)
    return match.group(0) if match else None


def judge(template: Resource) -> tuple[bool, str]:
    metadata = template.inputs.get("metadata") or {}
    declared = str(metadata.get("aistack-image") or "")
    lines = startup_files(template).get("runtime.args", "").split("\n")
    # docker run [options] IMAGE [COMMAND]: the first word that is not an option.
    at = next((i for i, w in enumerate(lines) if w and not w.startswith("-")), None)
    running = (
        lines[at]
        if at is not None
        else node_environment(template).get("AISTACK_RUNTIME_IMAGE", declared)
    )
    command = [w for w in lines[at + 1 :] if w] if at is not None else []
    image = running or declared
    if not image:
        return False, "does not say which image it serves (no aistack-image metadata)"
    if declared and running and declared != running:
        return False, f"declares {declared} but its startup script runs {running}"
    problem = reference_problem(image)
    if problem:
        return False, problem
    label = str((template.inputs.get("labels") or {}).get(RUNTIME_LABEL) or "").lower()
    runtime = _runtime_of(image, command, label)
    if runtime is None:
        return False, (
            f"image {image.split('@', 1)[0]} is not a known optimised runtime (vLLM, Triton, "
            f"TensorRT-LLM) and no {RUNTIME_LABEL} label names one"
        )
    return True, f"serves {image.split('@', 1)[0]} ({runtime}) pinned by digest"


@rule(
    id="AIS-S2-03",
    checklist=["S2"],
    info="Serving instance templates run vLLM, Triton or TensorRT-LLM from an image pinned "
    "by digest.",
    why="Optimised runtimes batch continuously and manage the KV cache, which is most of "
    "serving throughput per GPU; a digest makes what serves exactly what was tested.",
    fix="Use gcp.InferenceTier with runtime vllm, triton or tensorrt-llm and image "
    "'repo@sha256:...'; on your own templates set the aistack-image metadata to the pinned "
    f"image (and an {RUNTIME_LABEL} label when its name does not say the runtime).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        good, message = judge(template)
        yield (ok if good else fail)(template, f"{message}.")
