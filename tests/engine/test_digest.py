"""The engine's speed work changes nothing it records: each example stack's graph, and a
program built from raw SDK resources that exercises every feature the recorder keeps, hash
to the digests computed on the engine before it was optimised (issue 17).

The canonical form is the StackGraph as JSON with sorted keys, resources sorted by URN and
each dependency list sorted: on the unoptimised engine registrations arrive on a thread pool
and Pulumi gathers dependencies in a set, so neither order is stable from run to run (it
varies with PYTHONHASHSEED and thread scheduling); everything else is compared exactly.

A deliberate change to a component changes its stack's digest. Regenerate the table with
`uv run --locked python tests/engine/test_digest.py` and say why in the commit; the
`engine-features` digest depends only on the engine and the SDK, and must not move.
"""

from __future__ import annotations

import gc
import hashlib
import json
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from aistack import engine
from aistack.engine import StackGraph

ROOT = Path(__file__).resolve().parents[2]

# The module on one pytest-xdist worker, so that its module-scoped graphs are built once.
pytestmark = pytest.mark.xdist_group("engine-digest")

#: sha256 of canonical_json(graph), computed on the unoptimised engine (commit 23ac783).
DIGESTS = {
    "reference": "8b4ad36e02bd3d00df32d062fa5c454fdd49f2cb4346c356d6f0d662f6a70261",
    "minimal-training": "8c614543a3616b22ee76264ae6112248419199e95e38f47a5977a2f5d71bfc4a",
    "engine-features": "4f825d26fc34e7e09482c482ef207e8db514fb4f9d7b802c9e28670a89a4beab",
    # Added when they landed (not from the unoptimised engine): later engine work must keep
    # them too.
    "gcp-guardrails": "8f6d272da4d80ebd7132c6cfb230ee6cf92735a717ed5dcfbfce16a6e6f864aa",
    "kubernetes": "7c4b8d275f6b5d08f21467961bdf6a3036adaf884003f0d1bfc29f5d512d838f",
    "kubernetes-eks": "7109c8a73e46527d9324fca5a090cd19a86c3f6573e4911f42d381405b832560",
    "kubernetes-operators": "d1a7e7beb05ff9c3c26212f4019e67a3772be9609be19743f431376c9c711819",
    "kubernetes-gke": "a3b1ca843f508f965065367c09129e6dd2fcc3ea4619fc24f4f292cb17fb75c3",
    "gcp-training": "2f7db70d0fc15396067ea89d4ae43de9f35d06aaa0ef9f8244ef03a965a51c40",
    "gcp": "62fefc4de8b67697d0dc8d6999d78faaa37dba1a1827aac3b1a5061298801c9e",
}


def canonical_json(graph: StackGraph) -> str:
    resources = [
        {
            "type": r.type,
            "name": r.name,
            "urn": r.urn,
            "parent": r.parent,
            "dependencies": sorted(r.dependencies),
            "inputs": r.inputs,
            "outputs": r.outputs,
            "protect": r.protect,
            "retain_on_delete": r.retain_on_delete,
            "property_dependencies": {
                key: sorted(urns) for key, urns in r.property_dependencies.items()
            },
        }
        for r in graph.resources
    ]
    resources.sort(key=lambda r: r["urn"])
    document = {
        "resources": resources,
        "stack_outputs": graph.stack_outputs,
        "registered_outputs": graph.registered_outputs,
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    # A file asset records its path (the budget guard's Lambda source): the checkout's
    # location is not part of the graph.
    return text.replace(str(ROOT), "<checkout>")


def digest(graph: StackGraph) -> str:
    return hashlib.sha256(canonical_json(graph).encode()).hexdigest()


class _Box(pulumi.ComponentResource):
    """A component with children, chained outputs and registered outputs."""

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("test:index:Box", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.key = aws.kms.Key(f"{name}-key", deletion_window_in_days=7, opts=child)
        self.bucket = aws.s3.Bucket(
            f"{name}-bucket",
            tags={"box": name},
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True),
        )
        self.sse = aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-sse",
            bucket=self.bucket.id,
            rules=[
                {
                    "apply_server_side_encryption_by_default": {
                        "sse_algorithm": "aws:kms",
                        "kms_master_key_id": self.key.arn,
                    }
                }
            ],
            opts=child,
        )
        policy = pulumi.Output.all(self.bucket.arn, self.key.arn).apply(
            lambda arns: json.dumps(
                {"Statement": [{"Effect": "Allow", "Resource": [arns[0], arns[1]]}]}
            )
        )
        self.policy = aws.s3.BucketPolicy(
            f"{name}-policy",
            bucket=self.bucket.id,
            policy=policy,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.sse]),
        )
        self.register_outputs({"bucket": self.bucket.bucket, "key": self.key.key_id})


def _engine_features() -> None:
    """Providers, invokes, components, explicit and implicit dependencies, protect and
    retain, secrets, assets, whole numbers and exports: what the recorder keeps."""
    west = aws.Provider("west", region="us-west-2", default_tags={"tags": {"team": "ml"}})
    zones = aws.get_availability_zones(state="available")
    identity = aws.get_caller_identity()
    vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16", opts=pulumi.ResourceOptions(provider=west))
    subnets = [
        aws.ec2.Subnet(
            f"subnet-{i}",
            vpc_id=vpc.id,
            cidr_block=f"10.0.{i}.0/24",
            availability_zone=zones.names[i],
            opts=pulumi.ResourceOptions(provider=west),
        )
        for i in range(2)
    ]
    boxes = [_Box(f"box{i}") for i in range(3)]
    role = aws.iam.Role(
        "role",
        assume_role_policy=json.dumps({"Principal": {"AWS": identity.account_id}}),
        max_session_duration=3600,
    )
    fn = aws.lambda_.Function(
        "fn",
        role=role.arn,
        runtime="python3.12",
        handler="index.handler",
        code=pulumi.AssetArchive({"index.py": pulumi.StringAsset("def handler(e, c): pass")}),
        environment={"variables": {"TOKEN": pulumi.Output.secret("s3cret")}},
        opts=pulumi.ResourceOptions(depends_on=[b.policy for b in boxes]),
    )
    pulumi.export("subnets", [s.id for s in subnets])
    pulumi.export("buckets", {b._name: b.bucket.arn for b in boxes})
    pulumi.export("fn", fn.arn)
    pulumi.export("zone_count", len(zones.names))


def _graphs(run_project: Any = engine.run_project) -> dict[str, StackGraph]:
    return {
        "reference": run_project(ROOT, stack="dev"),
        "minimal-training": run_project(ROOT / "stacks" / "minimal-training"),
        "engine-features": engine.run(_engine_features, config={"aws:region": "us-east-1"}),
        "gcp-guardrails": run_project(ROOT / "stacks" / "gcp-guardrails"),
        "kubernetes": run_project(ROOT / "stacks" / "kubernetes"),
        "kubernetes-eks": run_project(ROOT / "stacks" / "kubernetes-eks"),
        "kubernetes-operators": run_project(ROOT / "stacks" / "kubernetes-operators"),
        "kubernetes-gke": run_project(ROOT / "stacks" / "kubernetes-gke"),
        "gcp-training": run_project(ROOT / "stacks" / "gcp-training"),
        "gcp": run_project(ROOT / "stacks" / "gcp"),
    }


@pytest.fixture(scope="module")
def graphs() -> dict[str, StackGraph]:
    # The example stacks as tests/_harness/previews.py hands them to every other test: copies of
    # the session's one real run of each, which is what the digests must hold.
    from tests._harness import previews

    return _graphs(previews.run_project)


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_the_recorded_graph_is_unchanged(graphs, name):
    assert digest(graphs[name]) == DIGESTS[name], (
        f"the {name} graph changed; if on purpose (a component changed), regenerate with "
        "`uv run --locked python tests/engine/test_digest.py`"
    )


def test_the_canonical_form_keeps_every_recorded_field(graphs):
    # The digest would not notice a field it never hashes: the features program must
    # exercise each one.
    document: dict[str, Any] = json.loads(canonical_json(graphs["engine-features"]))
    resources = document["resources"]
    assert any(r["protect"] and r["retain_on_delete"] for r in resources)
    assert any(r["property_dependencies"].get("bucket") for r in resources)
    assert any(r["dependencies"] for r in resources)
    assert document["registered_outputs"] and document["stack_outputs"]["zone_count"] >= 2


def test_the_engine_restores_pulumis_runtime_after_each_run():
    from pulumi.runtime import resource as pulumi_resource
    from pulumi.runtime import stack as pulumi_stack

    before = pulumi_stack.wait_for_rpcs, pulumi_resource._get_stack_trace
    thresholds = gc.get_threshold()

    def failing() -> None:
        bucket = aws.s3.Bucket("b")
        pulumi.export("boom", bucket.arn.apply(lambda arn: 1 / 0))

    engine.run(lambda: aws.s3.Bucket("a"))
    # An output that fails still fails the run, with its own exception.
    with pytest.raises(ZeroDivisionError):
        engine.run(failing)
    assert (pulumi_stack.wait_for_rpcs, pulumi_resource._get_stack_trace) == before
    assert gc.get_threshold() == thresholds


if __name__ == "__main__":
    for name, graph in _graphs().items():
        print(f'    "{name}": "{digest(graph)}",')
