"""GpuQuota: vCPU quota requests sized from pools, per quota code, validated up front."""

import pytest

from aistack import aws as aistack_aws
from aistack.contracts.capacity import CapacityNeed, HasCapacityNeeds
from aistack.errors import ConfigError

QUOTA = "aws:servicequotas/serviceQuota:ServiceQuota"


def _need(pool="training", types=("g5.12xlarge",), nodes=2, market="spot"):
    return {"pool": pool, "instanceTypes": list(types), "maxNodes": nodes, "market": market}


def _args(governance, *needs, **overrides):
    """Arguments for the pool arithmetic: without the default per-pool headroom, which the
    headroom tests below add back."""
    return {
        "region": "us-east-1",
        "governance": governance,
        "needs": list(needs),
        "headroomInstancesPerPool": 0,
        **overrides,
    }


def _values(graph):
    """quota code -> requested vCPUs, from the recorded ServiceQuota resources."""
    return {r.inputs["quotaCode"]: r.inputs["value"] for r in graph.of_type(QUOTA)}


def _refused(run, args, **kwargs):
    errors = []

    def program():
        try:
            aistack_aws.GpuQuota("quota", args, **kwargs)
        except ConfigError as error:
            errors.append(error)

    graph = run(program)
    assert graph.resources == [], "nothing may register when the config is refused"
    assert errors, "expected a ConfigError"
    return errors[0]


def test_a_pool_is_sized_at_max_nodes_times_its_largest_instance_type(run, governance):
    need = _need(types=("g5.xlarge", "g5.12xlarge", "g5.4xlarge"), nodes=3)
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, need)))
    assert _values(graph) == {"L-3819A6DF": 3 * 48}


def test_two_pools_in_the_same_family_group_and_market_are_summed(run, governance):
    graph = run(
        lambda: aistack_aws.GpuQuota(
            "quota",
            _args(
                governance,
                _need("train", ("g5.12xlarge",), 2, "spot"),
                _need("eval", ("g6e.48xlarge",), 1, "spot"),
            ),
        )
    )
    assert _values(graph) == {"L-3819A6DF": 2 * 48 + 192}
    assert len(graph.of_type(QUOTA)) == 1


def test_on_demand_and_spot_are_separate_requests(run, governance):
    graph = run(
        lambda: aistack_aws.GpuQuota(
            "quota",
            _args(
                governance,
                _need("train", ("g5.12xlarge",), 4, "spot"),
                _need("serve", ("g5.12xlarge",), 2, "on-demand"),
            ),
        )
    )
    assert _values(graph) == {"L-3819A6DF": 192, "L-DB2E81BA": 96}


def test_g_and_p_families_are_separate_requests(run, governance):
    graph = run(
        lambda: aistack_aws.GpuQuota(
            "quota",
            _args(
                governance,
                _need("train", ("p5.48xlarge",), 2, "spot"),
                _need("eval", ("g5.12xlarge",), 1, "spot"),
            ),
        )
    )
    assert _values(graph) == {"L-7212CCBC": 384, "L-3819A6DF": 48}


@pytest.mark.parametrize(
    ("instance_type", "market", "code"),
    [
        ("g5.12xlarge", "spot", "L-3819A6DF"),
        ("p5.48xlarge", "spot", "L-7212CCBC"),
        ("p4d.24xlarge", "on-demand", "L-417A185B"),
        ("g6e.12xlarge", "on-demand", "L-DB2E81BA"),
    ],
)
def test_each_family_and_market_uses_its_aws_quota_code(
    run, governance, instance_type, market, code
):
    need = _need(types=(instance_type,), nodes=1, market=market)
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, need)))
    (quota,) = graph.of_type(QUOTA)
    assert quota.name == f"quota-{code}"
    assert quota.inputs["quotaCode"] == code
    assert quota.inputs["serviceCode"] == "ec2"
    assert quota.inputs["region"] == "us-east-1"
    assert quota.parent == graph.named("quota").urn


def test_headroom_is_rounded_up_to_whole_instances(run, governance):
    # 10% of 2 x 48 is 9.6 vCPUs: no g5.12xlarge fits in that, so a whole one is added.
    need = _need(types=("g5.12xlarge",), nodes=2)
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, need, headroomPercent=10)))
    assert _values(graph) == {"L-3819A6DF": 96 + 48}


def test_headroom_rounds_to_the_smallest_type_the_pools_can_launch(run, governance):
    # 25% of 2 x 192 = 96 exactly, already whole g5.xlarge (4 vCPU) units.
    need = _need(types=("g5.xlarge", "g5.48xlarge"), nodes=2)
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, need, headroomPercent=25)))
    assert _values(graph) == {"L-3819A6DF": 384 + 96}
    # 1% of 384 = 3.84 -> 4: one g5.xlarge.
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, need, headroomPercent=1)))
    assert _values(graph) == {"L-3819A6DF": 384 + 4}


def test_without_headroom_the_request_is_the_pools_maximum(run, governance):
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, _need(nodes=3))))
    assert _values(graph) == {"L-3819A6DF": 144}


def test_by_default_each_pool_gets_one_largest_instance_above_its_maximum(run, governance):
    # AWS Batch ComputeResource.maxvCpus (Batch API Reference): "With BEST_FIT_PROGRESSIVE,
    # SPOT_CAPACITY_OPTIMIZED and SPOT_PRICE_CAPACITY_OPTIMIZED ... AWS Batch might need to
    # exceed maxvCpus to meet your capacity requirements. In this event, AWS Batch never
    # exceeds maxvCpus by more than a single instance." Auto Scaling likewise exceeds its
    # maximum by one instance (or 10 %) while rebalancing zones (EC2 Auto Scaling User Guide,
    # "Rebalancing activities"). A quota at the exact maximum refuses that launch.
    captured = []

    def program():
        args = _args(
            governance,
            _need("train", ("g5.12xlarge", "g5.24xlarge"), 4),
            _need("eval", ("g5.48xlarge",), 1),
        )
        del args["headroomInstancesPerPool"]
        captured.append(aistack_aws.GpuQuota("quota", args))

    graph = run(program)
    assert _values(graph) == {"L-3819A6DF": 4 * 96 + 96 + 192 + 192}
    (request,) = captured[0].requests.values()
    assert request.headroom_vcpus == 96 + 192
    assert "plus 288 vCPUs pool headroom (train: 1 x g5.24xlarge above the maximum; eval: " in (
        request.summary
    )


def test_a_pools_surge_is_requested_on_top(run, governance):
    surge = CapacityNeed("serve", ("g5.xlarge",), 4, "on-demand", surge_nodes=4)
    graph = run(
        lambda: aistack_aws.GpuQuota(
            "quota", {"region": "us-east-1", "governance": governance}, pools=[_FakePool(surge)]
        )
    )
    # 4 nodes, 4 more while a refresh replaces them, and the one-instance headroom.
    assert _values(graph) == {"L-DB2E81BA": (4 + 4 + 1) * 4}


def test_a_floor_raises_a_request_but_never_lowers_it(run, governance):
    need = _need(types=("p5.48xlarge",), nodes=2)
    raised = run(
        lambda: aistack_aws.GpuQuota("quota", _args(governance, need, floors={"L-7212CCBC": 768}))
    )
    assert _values(raised) == {"L-7212CCBC": 768}
    kept = run(
        lambda: aistack_aws.GpuQuota("quota", _args(governance, need, floors={"L-7212CCBC": 96}))
    )
    assert _values(kept) == {"L-7212CCBC": 384}


def test_a_floor_for_a_quota_no_pool_uses_is_requested_on_its_own(run, governance):
    captured = []

    def program():
        captured.append(
            aistack_aws.GpuQuota("quota", _args(governance, _need(), floors={"L-417A185B": 96}))
        )

    graph = run(program)
    assert _values(graph) == {"L-3819A6DF": 96, "L-417A185B": 96}
    assert "no pool in this stack" in captured[0].summaries["L-417A185B"]


def test_outputs_name_the_quota_the_vcpus_and_the_pools(run, governance):
    captured = []

    def program():
        captured.append(
            aistack_aws.GpuQuota("quota", _args(governance, _need("training", ("p5.48xlarge",), 2)))
        )

    run(program)
    quota = captured[0]
    assert quota.requested_vcpus == {"L-7212CCBC": 384}
    assert quota.quota_names == {"L-7212CCBC": "All P Spot Instance Requests"}
    assert quota.summaries == {
        "L-7212CCBC": "Spot P instances: 384 vCPUs for pool training (2 x p5.48xlarge)"
    }


def test_summary_lists_every_pool_and_the_headroom(run, governance):
    captured = []

    def program():
        captured.append(
            aistack_aws.GpuQuota(
                "quota",
                _args(
                    governance,
                    _need("train", ("g5.12xlarge",), 2),
                    _need("eval", ("g5.48xlarge",), 1),
                    headroomPercent=10,
                ),
            )
        )

    run(program)
    assert captured[0].summaries["L-3819A6DF"] == (
        "Spot G and VT instances: 336 vCPUs for pools train (2 x g5.12xlarge, 96 vCPUs), "
        "eval (1 x g5.48xlarge, 192 vCPUs) plus 48 vCPUs headroom (10%, rounded up to "
        "whole g5.12xlarge)"
    )


def test_the_request_status_comes_back_from_aws(run, governance):
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, _need())))
    (quota,) = graph.of_type(QUOTA)
    assert quota.outputs["requestStatus"] == "PENDING"
    assert quota.outputs["id"] == "ec2/L-3819A6DF"


class _FakePool:
    """Stands in for TrainingPool / InferenceTier: anything with quota_needs()."""

    def __init__(self, *needs: CapacityNeed) -> None:
        self._needs = list(needs)

    def quota_needs(self) -> list[CapacityNeed]:
        return self._needs


def test_pool_components_are_sized_through_quota_needs(run, governance):
    training = _FakePool(
        CapacityNeed("training", ("p4d.24xlarge",), 2, "spot"),
        CapacityNeed("training", ("p4d.24xlarge",), 1, "on-demand"),
    )
    serving = _FakePool(CapacityNeed("serving", ("g6e.12xlarge",), 3, "on-demand"))
    assert isinstance(training, HasCapacityNeeds)
    graph = run(
        lambda: aistack_aws.GpuQuota(
            "quota",
            {"region": "us-east-1", "governance": governance, "headroomInstancesPerPool": 0},
            pools=[training, serving],
        )
    )
    assert _values(graph) == {"L-7212CCBC": 192, "L-417A185B": 96, "L-DB2E81BA": 144}


def test_config_needs_and_pool_components_add_up(run, governance):
    pool = _FakePool(CapacityNeed("serving", ("g5.12xlarge",), 1, "spot"))
    graph = run(
        lambda: aistack_aws.GpuQuota("quota", _args(governance, _need("train")), pools=[pool])
    )
    assert _values(graph) == {"L-3819A6DF": 96 + 48}


def test_needs_accept_quota_need_objects(run, governance):
    need = CapacityNeed("training", ("p5.48xlarge",), 1, "spot")
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, need)))
    assert _values(graph) == {"L-7212CCBC": 192}


def test_unknown_instance_type_is_refused_with_a_suggestion(run, governance):
    error = _refused(run, _args(governance, _need(types=("g5.12xlarg",))))
    assert error.fields == ["quota.needs.0.instanceTypes.0"]
    assert "did you mean 'g5.12xlarge'" in str(error)


def test_type_not_offered_in_the_region_is_refused(run, governance):
    # p5e.48xlarge is offered in us-east-2 and us-west-2 only.
    error = _refused(run, _args(governance, _need(types=("p5e.48xlarge",))))
    assert error.fields == ["quota.needs.0.instanceTypes.0"]
    assert "not offered in us-east-1" in str(error)


def test_gcp_machine_type_is_refused(run, governance):
    error = _refused(run, _args(governance, _need(types=("a3-highgpu-8g",))))
    assert error.fields == ["quota.needs.0.instanceTypes.0"]
    assert "GCP machine type" in str(error)


def test_zero_needs_are_refused(run, governance):
    error = _refused(run, _args(governance))
    assert error.fields == ["quota.needs"]


def test_region_outside_allowed_regions_is_refused(run, governance):
    error = _refused(run, _args(governance, _need(), region="eu-west-1"))
    assert "quota.region" in error.fields
    assert "C4" in str(error)


def test_zero_max_nodes_is_refused(run, governance):
    error = _refused(run, _args(governance, _need(nodes=0)))
    assert error.fields == ["quota.needs.0.maxNodes"]


def test_a_pool_from_a_component_is_validated_like_config(run, governance):
    pool = _FakePool(CapacityNeed("serving", ("g5.12xlarge",), 0, "spot"))
    error = _refused(run, {"region": "us-east-1", "governance": governance}, pools=[pool])
    # The path names the attribute as the component's Python code spells it.
    assert error.fields == ["quota.pools.0.0.max_nodes"]


def test_an_object_without_quota_needs_is_refused(run, governance):
    error = _refused(run, _args(governance, _need()), pools=[object()])
    assert error.fields == ["quota.pools.0"]


def test_a_pool_listed_twice_in_one_market_is_refused(run, governance):
    pool = _FakePool(CapacityNeed("train", ("g5.12xlarge",), 2, "spot"))
    error = _refused(run, _args(governance, _need("train")), pools=[pool])
    assert error.fields == ["quota.pools.0.0.pool"]
    assert "counted twice" in str(error)


def test_an_unknown_floor_code_is_refused(run, governance):
    error = _refused(run, _args(governance, _need(), floors={"L-1216C47A": 64}))
    assert error.fields == ["quota.floors.L-1216C47A"]
    assert "L-7212CCBC" in str(error)


def test_every_type_problem_is_reported_at_once(run, governance):
    need = _need(types=("g5.12xlarg", "p5e.48xlarge", "p5.48xlarge"))
    error = _refused(run, _args(governance, need, region="us-west-1"))
    assert set(error.fields) == {
        "quota.region",
        "quota.needs.0.instanceTypes.0",
        "quota.needs.0.instanceTypes.1",
        "quota.needs.0.instanceTypes.2",
    }


def test_market_is_required_and_headroom_is_a_percentage(governance):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.GpuQuotaArgs.parse(
            {
                "region": "us-east-1",
                "governance": governance,
                "needs": [{"pool": "x", "instanceTypes": ["g5.xlarge"], "maxNodes": 1}],
                "headroomPercent": 150,
            },
            where="quota",
        )
    assert set(caught.value.fields) == {"quota.needs.0.market", "quota.headroomPercent"}


def test_a_bad_type_from_a_component_names_the_pool_entry(run, governance):
    pool = _FakePool(CapacityNeed("serving", ("g5.12xlarg",), 1, "spot"))
    error = _refused(run, {"region": "us-east-1", "governance": governance}, pools=[pool])
    assert error.fields == ["quota.pools.0.0.instance_types.0"]


def test_an_account_quota_above_the_need_is_kept_not_lowered(run, governance, monkeypatch):
    from aistack.engine.cloud import SimulatedCloud

    # The account already has 500 vCPUs of Spot G: asking for 96 would fail the create.
    monkeypatch.setattr(SimulatedCloud, "service_quotas", {"L-3819A6DF": 500.0})
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, _need())))
    assert _values(graph) == {"L-3819A6DF": 500}


def test_a_new_account_gets_the_pools_need(run, governance):
    graph = run(lambda: aistack_aws.GpuQuota("quota", _args(governance, _need())))
    assert _values(graph) == {"L-3819A6DF": 96}
