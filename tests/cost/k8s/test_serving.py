"""The k8s.InferenceService estimator: each version's replicas at the replica's hourly cost,
within its autoscaler's bounds, beside a naive tier without the cache or scale-in."""

import pytest

from aistack import engine, k8s
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimate
from tests._harness import previews
from tests.k8s.test_inference_service import _args, _team

PRICE = 1.2  # _args' replicaHourlyCostUsd


def _items(profile=None, **overrides):
    graph = engine.run(lambda: k8s.InferenceService("chat", _args(**overrides), team=_team()))
    report = estimate(graph, profile or WorkloadProfile(inference_average_replicas=2))
    return {item.resource: item for item in report.items if item.component == "chat"}


def test_the_live_version_follows_load_and_the_standby_keeps_one_replica():
    items = _items()
    live, standby = items["chat-1-4-0"], items["chat-1-3-0"]
    month = PRICE * HOURS_PER_MONTH
    assert live.monthly_usd == pytest.approx(2 * month)
    assert live.naive_monthly_usd == pytest.approx(2 / 0.8 * month)  # no cache, 0.2 hit ratio
    assert standby.monthly_usd == standby.naive_monthly_usd == pytest.approx(month)


def test_the_autoscaler_s_maximum_caps_the_estimate():
    items = _items(WorkloadProfile(inference_average_replicas=10))
    assert items["chat-1-4-0"].monthly_usd == pytest.approx(4 * PRICE * HOURS_PER_MONTH)
    assert items["chat-1-4-0"].naive_monthly_usd > items["chat-1-4-0"].monthly_usd


def test_a_standby_at_zero_costs_nothing():
    versions = [
        {"version": "1.3.0", "weight": 0, "standby": "zero"},
        {"version": "1.4.0", "weight": 100},
    ]
    assert _items(versions=versions)["chat-1-3-0"].monthly_usd == 0


def test_a_serving_node_pool_is_priced_once_as_the_replicas_on_it():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    graph = previews.run_project(root / "stacks" / "kubernetes-gke", stack="dev")
    profile = WorkloadProfile(training_gpu_hours_per_month=400)
    items = {item.resource: item for item in estimate(graph, profile).items}
    assert "l4-serve-pool" not in items  # its nodes are the replicas' line
    assert "vision-chat-1-4-0" in items
    assert "400 GPU-h" in items["l4-spot-pool"].basis  # training's hours are not shared
