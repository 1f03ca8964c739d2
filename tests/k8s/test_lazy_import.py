"""pulumi_kubernetes loads only when a stack uses a Kubernetes component: an AWS or GCP stack
never imports it, and a Kubernetes stack never imports pulumi_aws or pulumi_gcp (as
tests/gcp/test_lazy_import.py proves for the two clouds).

The stacks run in fresh interpreters (tests/_harness/sdk_imports.py): the program imports every
aistack cloud package, aws, gcp and k8s, and runs one stack."""

import pytest

from tests._harness.sdk_imports import XDIST_GROUP, modules_loaded_by

pytestmark = pytest.mark.xdist_group(XDIST_GROUP)


def test_an_aws_stack_never_imports_pulumi_kubernetes():
    assert modules_loaded_by("aws")["pulumi_kubernetes"] is False


def test_a_gcp_stack_never_imports_pulumi_kubernetes():
    assert modules_loaded_by("gcp")["pulumi_kubernetes"] is False


def test_a_kubernetes_stack_imports_neither_cloud_sdk():
    assert modules_loaded_by("k8s") == {
        "pulumi_aws": False,
        "pulumi_gcp": False,
        "pulumi_kubernetes": True,
    }
