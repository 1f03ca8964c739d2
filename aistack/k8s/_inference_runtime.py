"""What `k8s.InferenceService` knows about each runtime: how it starts, where it answers,
and which of its metrics the autoscaler and the alerts read (S2, S3, S5).

Sources, per runtime:

- vLLM (OpenAI-compatible server; the image's entrypoint takes the arguments, as on AWS):
  `/health`, metrics on the serving port at `/metrics` (docs.vllm.ai "Production Metrics":
  `vllm:num_requests_waiting` gauge, `vllm:e2e_request_latency_seconds` histogram). HTTP
  status counts come from prometheus-fastapi-instrumentator, a vLLM dependency
  (requirements/common.txt), whose default `http_requests_total` has `handler`, `method` and
  `status` labels with statuses grouped as `2xx`, `5xx`...
- Triton (docs/user_guide/metrics.md, "Inference Request Metrics"): `/v2/health/ready` on the
  HTTP port, metrics on `--metrics-port` (8002); `nv_inference_request_success` and
  `nv_inference_request_failure` counters, `nv_inference_pending_request_count` gauge, and
  latency quantiles (0.5, 0.9, 0.95, 0.99, 0.999) from the summary
  `nv_inference_request_summary_us`, which `--metrics-config summary_latencies=true` turns on.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RUNTIMES", "RUNTIME_PORT", "Runtime", "runtime_args"]

#: Port the runtime listens on inside the pod; only the gateway sidecar is meant to use it.
RUNTIME_PORT = 8000
#: The series label that carries the version, copied from the pod's label by the scrape.
VERSION_LABEL = "aistack_dev_model_version"
MODEL_LABEL = "aistack_dev_model_name"


@dataclass(frozen=True)
class Runtime:
    health_path: str
    metrics_port: int
    #: PromQL of requests waiting per pod, over `{selector}`.
    queue: str
    #: Per-second request rate and 5xx rate, summed over `{selector}`.
    requests: str
    errors: str
    #: Latency in seconds at quantile `{q}` over `{selector}`.
    latency: str


RUNTIMES: dict[str, Runtime] = {
    "vllm": Runtime(
        health_path="/health",
        metrics_port=RUNTIME_PORT,
        queue="vllm:num_requests_waiting{{{selector}}}",
        requests='sum(rate(http_requests_total{{{selector},handler=~"/v1/.*"}}[5m]))',
        errors='sum(rate(http_requests_total{{{selector},handler=~"/v1/.*",status="5xx"}}[5m]))',
        latency="histogram_quantile({q}, sum by (le) "
        "(rate(vllm:e2e_request_latency_seconds_bucket{{{selector}}}[5m])))",
    ),
    "triton": Runtime(
        health_path="/v2/health/ready",
        metrics_port=8002,
        queue="nv_inference_pending_request_count{{{selector}}}",
        requests="sum(rate(nv_inference_request_success{{{selector}}}[5m])) + "
        "sum(rate(nv_inference_request_failure{{{selector}}}[5m]))",
        errors="sum(rate(nv_inference_request_failure{{{selector}}}[5m]))",
        # A summary's quantiles cannot be merged across pods: the worst pod's is the bound.
        latency='max(nv_inference_request_summary_us{{{selector},quantile="{q}"}}) / 1e6',
    ),
}


def runtime_args(runtime: str, model_path: str, model_name: str, gpus: int) -> list[str]:
    """The runtime's own arguments, the same flags as on an AWS serving node."""
    if runtime == "vllm":
        return [
            "--model", model_path, "--served-model-name", model_name,
            "--host", "0.0.0.0", "--port", str(RUNTIME_PORT),
            "--tensor-parallel-size", str(gpus),
        ]  # fmt: skip
    return [
        "tritonserver", f"--model-repository={model_path}",
        f"--http-port={RUNTIME_PORT}", "--grpc-port=8001", "--metrics-port=8002",
        "--metrics-config=summary_latencies=true",
    ]  # fmt: skip
