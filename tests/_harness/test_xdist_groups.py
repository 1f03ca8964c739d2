"""The xdist groups hold: under `--dist loadgroup` a grouped test's id carries its group,
which is what xdist's scheduler sends to one worker (tests/_harness/xdist_groups.py)."""

import os

import pytest

pytestmark = pytest.mark.xdist_group("grouping-check")


def test_a_grouped_test_carries_its_group_on_an_xdist_worker(request):
    if "PYTEST_XDIST_WORKER" not in os.environ or not request.config.option.loadgroup:
        pytest.skip("grouping applies to xdist workers with --dist loadgroup")
    assert request.node.nodeid.endswith("@grouping-check")
