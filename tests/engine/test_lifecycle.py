"""The lifecycle model (aistack.engine.lifecycle) on small graphs: each rule's two sides.

The cases are the ones the GCP audit found on real Google Cloud
(../shared/research/gcp-fidelity-audit.md, defects 1-3 and 12), each with its source in
the rule it exercises."""

from __future__ import annotations

import copy
import dataclasses

from aistack.engine.graph import Resource, StackGraph
from aistack.engine.lifecycle import Account

LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
ROLE = "gcp:projects/iAMCustomRole:IAMCustomRole"
MEMBER = "gcp:projects/iAMMember:IAMMember"
SERVICE = "gcp:projects/service:Service"
GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"


def _graph(stack: str, *resources: tuple[str, dict, bool], project: str = "p") -> StackGraph:
    return StackGraph(
        project=project,
        stack=stack,
        resources=[
            Resource(
                type=kind,
                name=f"r{i}",
                urn=f"urn:pulumi:{stack}::{project}::{kind}::r{i}",
                parent=None,
                dependencies=(),
                inputs=inputs,
                outputs=inputs,
                custom=True,
                retain_on_delete=retained,
            )
            for i, (kind, inputs, retained) in enumerate(resources)
        ],
        stack_outputs={},
        config={"gcp:project": "team", "gcp:region": "europe-west4"},
    )


def _bucket(bucket_id: str, *, retained: bool) -> tuple[str, dict, bool]:
    return (LOG_BUCKET, {"bucketId": bucket_id, "location": "europe-west4"}, retained)


def test_a_deleted_log_bucket_blocks_the_next_up_for_seven_days():
    graph = _graph("dev", _bucket("train-logs", retained=False))
    account = Account()
    assert account.up(graph) == []
    account.destroy(graph)
    (problem,) = account.up(graph)
    assert "soft-deleted" in problem.what and "7 days" in problem.what
    account.destroy(graph)
    account.wait(days=7)
    assert account.up(graph) == []


def test_a_retained_log_bucket_is_adopted_by_the_next_up():
    graph = _graph("dev", _bucket("train-logs", retained=True))
    account = Account()
    account.up(graph)
    account.destroy(graph)
    assert account.up(graph) == []


def test_a_second_stack_silently_adopting_a_log_bucket_is_a_problem():
    account = Account()
    account.up(_graph("dev", _bucket("train-logs", retained=False)))
    (problem,) = account.up(_graph("staging", _bucket("train-logs", retained=False)))
    assert "silently takes it over" in problem.what and "p/dev" in problem.what


def test_a_soft_deleted_custom_role_is_undeleted_but_an_active_one_conflicts():
    role = (ROLE, {"roleId": "aistack_watchdog"}, False)
    account = Account()
    account.up(_graph("dev", role))
    (problem,) = account.up(_graph("staging", role))
    assert "already exists and must be imported" in problem.what
    account.destroy(_graph("dev", role))
    assert account.up(_graph("dev", role)) == []


def test_a_fixed_group_name_conflicts_across_stacks_and_is_free_after_destroy():
    group = (GROUP, {"name": "train-mig", "region": "europe-west4"}, False)
    account = Account()
    account.up(_graph("dev", group))
    assert len(account.up(_graph("staging", group))) == 1
    other_region = (GROUP, {"name": "train-mig", "region": "us-central1"}, False)
    assert account.up(_graph("prod", other_region)) == []
    account.destroy(_graph("dev", group))
    assert account.up(_graph("dev", group)) == []


def test_a_shared_binding_is_a_problem_unless_every_holder_keeps_it():
    member = (MEMBER, {"role": "roles/logging.logWriter", "member": "serviceAccount:x"}, False)
    account = Account()
    account.up(_graph("dev", member))
    (problem,) = account.up(_graph("staging", member))
    assert "destroying either stack deletes it for both" in problem.what
    kept_api = (SERVICE, {"service": "compute.googleapis.com", "disableOnDestroy": False}, False)
    assert account.up(_graph("dev", kept_api)) == []
    assert account.up(_graph("staging", kept_api)) == []
    disabling_api = (SERVICE, {"service": "run.googleapis.com"}, False)
    account.up(_graph("dev", disabling_api))
    assert len(account.up(_graph("staging", disabling_api))) == 1


def test_a_resource_a_stack_stops_declaring_is_released():
    account = Account()
    account.up(_graph("dev", (GROUP, {"name": "g", "region": "r"}, False)))
    account.up(_graph("dev"))
    assert account.up(_graph("staging", (GROUP, {"name": "g", "region": "r"}, False))) == []


REPOSITORY = "gcp:artifactregistry/repository:Repository"


def _importing(graph: StackGraph, import_id: str) -> StackGraph:
    graph.resources = [dataclasses.replace(r, import_id=import_id) for r in graph.resources]
    return graph


def test_an_import_takes_over_what_a_destroy_kept_and_existing_shows_it():
    kept = (REPOSITORY, {"repositoryId": "images-abc123", "location": "europe-west4"}, True)
    account = Account()
    account.up(_graph("dev", kept))
    account.destroy(_graph("dev", kept))
    assert list(account.existing()) == [(REPOSITORY, ("team", "europe-west4"), "images-abc123")]
    # Created again, the kept name is met; imported, it is taken over.
    assert [p.stack for p in _copy(account).up(_graph("dev", kept))] == ["p/dev"]
    assert account.up(_importing(_graph("dev", kept), "projects/team/.../images-abc123")) == []


def test_an_import_of_a_name_nobody_holds_or_another_stack_holds_fails():
    kept = (REPOSITORY, {"repositoryId": "images-abc123", "location": "europe-west4"}, True)
    nobody = Account().up(_importing(_graph("dev", kept), "x"))
    assert [p.what for p in nobody] and "does not hold" in nobody[0].what
    account = Account()
    account.up(_graph("dev", kept))
    shared = account.up(_importing(_graph("staging", kept), "x"))
    assert shared and "p/dev" in shared[0].what


def test_existing_marks_a_soft_deleted_name_deleted():
    account = Account()
    bucket = (LOG_BUCKET, {"bucketId": "audit-abc123", "location": "europe-west4"}, False)
    account.up(_graph("dev", bucket))
    account.destroy(_graph("dev", bucket))
    assert [v["state"] for v in account.existing().values()] == ["DELETED"]


def _copy(account: Account) -> Account:
    return copy.deepcopy(account)
