"""GCP rules on what a serving VM boots (gcp.InferenceTier): an optimised runtime pinned by
digest (S2), the gateway's body-keyed cache (S4), a declared fallback the gateway gives
(G5). The component's templates comply; its templates with the cache off, and hand-written
templates (labels only, or a startup script packing a changed nginx.conf), fail."""

import base64
import gzip
import io
import tarfile

import pulumi_gcp as gcp
import pytest

from aistack.gcp._inference_node import unpack_startup_script
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE
from tests.gcp.test_inference_tier import PROJECT, stack
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-gcp-gcp_serving_node_rules")

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
SUBNET = f"projects/{PROJECT}/regions/europe-west4/subnetworks/inference"
TEMPLATES = {"serve-1-4-0-template": "compliant", "serve-1-3-2-template": "compliant"}
DIGEST = "@sha256:" + "3" * 64
VLLM = "europe-west4-docker.pkg.dev/p/r/vllm-server" + DIGEST
SERVING_LABELS = {"aistack-workload": "inference", "aistack-fallback": "error"}


def components(**overrides):
    return stack(dict(GOVERNANCE), **overrides)


def real_files(graph):
    """The files gcp.InferenceTier packs into a serving VM's startup script, read from the
    module's build of the tier (`components_graph`). That build adds `aws:region` to the
    config (tests/policy/rules/shared_verdicts.build); no AWS resource is in the stack and
    the script is rendered from the tier's arguments alone, so it is the script a build
    with CONFIG only packs."""
    script = graph.named("serve-1-4-0-template").inputs["metadata"]["startup-script"]
    return unpack_startup_script(script)


def packed(files):
    """A startup script with an AISTACK_FILES block, as gcp.InferenceTier writes one."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive = base64.encodebytes(gzip.compress(raw.getvalue())).decode()
    return (
        "#!/bin/bash\nbase64 -d <<'AISTACK_FILES' | tar -xzf - -C /opt/aistack-serving\n"
        f"{archive}AISTACK_FILES\n"
    )


def serving_template(image=VLLM, labels=None, script=None):
    def program():
        gcp.compute.RegionInstanceTemplate(
            "legacy-serve",
            region="europe-west4",
            machine_type="g2-standard-8",
            disks=[{"boot": True, "source_image": "projects/p/global/images/x"}],
            network_interfaces=[{"subnetwork": SUBNET}],
            labels={**SERVING_LABELS, **(labels or {})},
            metadata={
                **({"aistack-image": image} if image else {}),
                **({"startup-script": script} if script else {}),
            },
        )

    return program


def training_only():
    gcp.compute.RegionInstanceTemplate(
        "train",
        region="europe-west4",
        machine_type="g2-standard-8",
        disks=[{"boot": True, "source_image": "projects/p/global/images/x"}],
        network_interfaces=[{"subnetwork": SUBNET}],
        labels={"aistack-workload": "training"},
    )


@pytest.fixture(scope="module")
def components_graph():
    """The tier's stack, built once for the module's compliant cases."""
    with shared(build(components(), **CONFIG)) as graph:
        yield graph


@pytest.fixture(scope="module")
def training_only_graph():
    """A stack without serving templates, built once for the cases it concerns."""
    with shared(build(training_only, **CONFIG)) as graph:
        yield graph


@pytest.mark.parametrize("rule", ["AIS-S2-03", "AIS-S4-03", "AIS-G5-03"])
def test_the_tiers_templates_comply(rule, components_graph):
    assert verdicts_of(rule, components_graph) == TEMPLATES


@pytest.mark.parametrize("rule", ["AIS-S2-03", "AIS-S4-03", "AIS-G5-03"])
def test_a_stack_without_serving_templates_is_not_concerned(rule, training_only_graph):
    assert verdicts_of(rule, training_only_graph) == {"": "not-applicable"}


# ---- S2 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "runtime", [{"runtime": "triton"}, {"runtime": "tensorrt-llm"}], ids=["triton", "trtllm"]
)
def test_s2_the_tiers_other_runtimes_are_recognised_from_their_command(verdicts, runtime):
    # The image name says nothing; the packed `docker run` command names the runtime.
    image = {"image": "europe-west4-docker.pkg.dev/p/r/model-server" + DIGEST}
    assert verdicts("AIS-S2-03", components(**runtime, **image), **CONFIG) == TEMPLATES


def test_s2_a_pinned_vllm_image_on_a_hand_written_template_complies(verdicts):
    assert verdicts("AIS-S2-03", serving_template(), **CONFIG) == {"legacy-serve": "compliant"}


@pytest.mark.parametrize(
    "program",
    [
        serving_template(image=None),
        serving_template(image="vllm/vllm-openai:latest"),
        serving_template(image="europe-west4-docker.pkg.dev/p/r/flask-app" + DIGEST),
        serving_template(script=packed({"runtime.args": "--gpus=all\nvllm/vllm-openai:v0.6\n"})),
    ],
    ids=["no-image", "tag-not-digest", "not-an-optimised-runtime", "runs-another-image"],
)
def test_s2_an_unpinned_unknown_or_mismatched_serving_image_fails(verdicts, program):
    assert verdicts("AIS-S2-03", program, **CONFIG) == {"legacy-serve": "non-compliant"}


# ---- S4 -----------------------------------------------------------------------------------


def test_s4_the_tier_with_its_gateway_cache_off_fails(verdicts):
    assert verdicts("AIS-S4-03", components(gateway={"cacheEnabled": False}), **CONFIG) == {
        "serve-1-4-0-template": "non-compliant", "serve-1-3-2-template": "non-compliant"
    }  # fmt: skip


def test_s4_a_gateway_whose_cache_key_ignores_the_body_fails(verdicts, components_graph):
    conf = real_files(components_graph)["nginx.conf"]
    assert "$request_body" in conf
    for changed in (
        conf.replace("|$request_body", ""),
        conf.replace("proxy_cache_methods GET HEAD POST;", "proxy_cache_methods GET HEAD;"),
    ):
        program = serving_template(script=packed({"nginx.conf": changed}))
        assert verdicts("AIS-S4-03", program, **CONFIG) == {"legacy-serve": "non-compliant"}


@pytest.mark.parametrize(("value", "verdict"), [("on", "compliant"), ("off", "non-compliant"),
                                                (None, "non-compliant")])  # fmt: skip
def test_s4_without_a_packed_gateway_the_label_decides(verdicts, value, verdict):
    labels = {"aistack-gateway-cache": value} if value else {}
    assert verdicts("AIS-S4-03", serving_template(labels=labels), **CONFIG) == {
        "legacy-serve": verdict
    }


# ---- G5 -----------------------------------------------------------------------------------


def test_g5_a_template_without_a_declared_fallback_fails(verdicts):
    program = serving_template(labels={"aistack-fallback": None})
    assert verdicts("AIS-G5-03", program, **CONFIG) == {"legacy-serve": "non-compliant"}


def test_g5_a_declared_fallback_the_gateway_does_not_give_fails(verdicts, components_graph):
    conf = real_files(components_graph)["nginx.conf"]
    assert verdicts("AIS-G5-03", serving_template(script=packed({"nginx.conf": conf})),
                    **CONFIG) == {"legacy-serve": "compliant"}  # fmt: skip
    for changed in (
        conf.replace("error_page 502 503 504 = @unavailable;", ""),
        conf.replace('return 503 \'{"error": {"message": "model unavailable"', "return 200 '{"),
    ):
        program = serving_template(script=packed({"nginx.conf": changed}))
        assert verdicts("AIS-G5-03", program, **CONFIG) == {"legacy-serve": "non-compliant"}
