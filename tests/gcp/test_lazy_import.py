"""Each cloud's SDK loads only when a stack uses that cloud: `from aistack import aws, gcp`
is free, and a program on one cloud never imports the other's provider (pulumi_aws alone
takes seconds and hundreds of MB to import).

The stacks run in fresh interpreters (tests/_harness/sdk_imports.py): the program imports every
aistack cloud package, aws, gcp and k8s, and runs one stack."""

import pytest

from tests._harness.sdk_imports import XDIST_GROUP, modules_loaded_by

pytestmark = pytest.mark.xdist_group(XDIST_GROUP)


def _modules_loaded_by(which: str) -> dict[str, bool]:
    return modules_loaded_by(which, ("pulumi_aws", "pulumi_gcp"))


def test_an_aws_stack_never_imports_pulumi_gcp():
    assert _modules_loaded_by("aws") == {"pulumi_aws": True, "pulumi_gcp": False}


def test_a_gcp_stack_never_imports_pulumi_aws():
    assert _modules_loaded_by("gcp") == {"pulumi_aws": False, "pulumi_gcp": True}
