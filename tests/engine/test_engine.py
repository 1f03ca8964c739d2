"""The simulated cloud records a real tree and DAG, isolates runs and refuses unknown invokes."""

import textwrap

import pulumi
import pulumi_aws as aws
import pytest

from aistack import engine
from aistack.errors import ConfigError


class _Box(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("test:index:Box", name, None, opts)
        self.bucket = aws.s3.Bucket(f"{name}-bucket", opts=pulumi.ResourceOptions(parent=self))
        self.versioning = aws.s3.BucketVersioning(
            f"{name}-versioning",
            bucket=self.bucket.id,
            versioning_configuration={"status": "Enabled"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"bucket": self.bucket.bucket})


def test_records_parent_and_dependencies():
    graph = engine.run(lambda: _Box("box"))
    box = graph.named("box")
    bucket = graph.named("box-bucket")
    versioning = graph.named("box-versioning")
    assert bucket.parent == box.urn
    assert {child.name for child in graph.children(box)} == {"box-bucket", "box-versioning"}
    # The versioning config consumed the bucket's id, so the engine saw the dependency.
    assert bucket.urn in versioning.dependencies
    assert versioning.property_dependencies["bucket"] == (bucket.urn,)
    assert graph.component_of(versioning) == box


def test_inputs_are_camel_case_and_whole_numbers_are_ints():
    def program():
        aws.cloudwatch.LogGroup("logs", retention_in_days=90, skip_destroy=True)

    logs = engine.run(program).named("logs")
    assert logs.inputs["retentionInDays"] == 90
    assert isinstance(logs.inputs["retentionInDays"], int)
    assert logs.inputs["skipDestroy"] is True


def test_outputs_carry_realistic_ids_and_arns_in_the_provider_region():
    def program():
        provider = aws.Provider("eu", region="eu-west-1")
        opts = pulumi.ResourceOptions(provider=provider)
        aws.s3.Bucket("data", bucket="team-data", opts=opts)
        aws.iam.Role("trainer", assume_role_policy="{}", opts=opts)
        aws.ec2.Vpc("net", cidr_block="10.0.0.0/16", opts=opts)
        aws.kms.Key("key", opts=opts)

    graph = engine.run(program)
    assert graph.named("data").outputs["arn"] == "arn:aws:s3:::team-data"
    assert graph.named("trainer").outputs["arn"].startswith("arn:aws:iam::123456789012:role/")
    assert graph.named("net").id.startswith("vpc-")
    assert graph.named("key").outputs["arn"].startswith("arn:aws:kms:eu-west-1:123456789012:key/")


def test_runs_are_deterministic():
    first = engine.run(lambda: _Box("box"))
    second = engine.run(lambda: _Box("box"))
    assert [r.outputs for r in first] == [r.outputs for r in second]


def test_runs_are_isolated_from_each_other():
    engine.run(lambda: _Box("one"), config={"color": "red"})

    seen = {}

    def program():
        seen["color"] = pulumi.Config().get("color")

    graph = engine.run(program)
    assert len(graph.resources) == 0
    assert seen["color"] is None


def test_structured_config_reaches_the_program_as_objects():
    seen = {}

    def program():
        seen["pool"] = pulumi.Config().require_object("pool")
        seen["region"] = pulumi.Config("aws").require("region")

    engine.run(program, config={"pool": {"maxNodes": 4}, "aws:region": "us-west-2"})
    assert seen == {"pool": {"maxNodes": 4}, "region": "us-west-2"}


def test_stack_outputs_are_recorded():
    def program():
        box = _Box("box")
        pulumi.export("bucket", box.bucket.bucket)
        pulumi.export("count", 3)

    graph = engine.run(program)
    assert graph.stack_outputs["bucket"] == graph.named("box-bucket").outputs["bucket"]
    assert graph.stack_outputs["count"] == 3


def test_invokes_answer_identity_region_and_zones():
    seen = {}

    def program():
        provider = aws.Provider("p", region="us-west-2")
        opts = pulumi.InvokeOutputOptions(provider=provider)
        aws.get_caller_identity_output(opts=opts).account_id.apply(
            lambda v: seen.setdefault("account", v)
        )
        aws.get_region_output(opts=opts).region.apply(lambda v: seen.setdefault("region", v))
        aws.get_availability_zones_output(opts=opts).names.apply(
            lambda v: seen.setdefault("zones", v)
        )

    engine.run(program)
    assert seen["account"] == "123456789012"
    assert seen["region"] == "us-west-2"
    assert seen["zones"] and all(zone.startswith("us-west-2") for zone in seen["zones"])


def test_instance_type_offerings_come_from_the_catalog():
    seen = {}

    def program():
        aws.ec2.get_instance_type_offerings_output(
            location_type="availability-zone",
            filters=[{"name": "instance-type", "values": ["p5.48xlarge"]}],
        ).locations.apply(lambda v: seen.setdefault("zones", v))

    engine.run(program, config={"aws:region": "us-east-1"})
    from aistack import catalog

    assert seen["zones"] == list(catalog.get("p5.48xlarge").zones("us-east-1"))


def test_unknown_invoke_fails_naming_the_token():
    def program():
        aws.ec2.get_vpc_output(default=True)

    with pytest.raises(engine.UnknownInvokeError, match="aws:ec2/getVpc:getVpc"):
        engine.run(program)


def test_config_error_in_program_propagates_unchanged():
    def program():
        raise ConfigError("too small", field="pool.maxNodes", fix="raise it")

    with pytest.raises(ConfigError) as caught:
        engine.run(program)
    assert caught.value.fields == ["pool.maxNodes"]


def test_run_project_reads_main_and_structured_stack_config(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: teamstack\nruntime: python\nmain: infra\n")
    (tmp_path / "Pulumi.prod.yaml").write_text(
        "config:\n  aws:region: eu-central-1\n  teamstack:buckets:\n    names: [a, b]\n"
    )
    (tmp_path / "infra").mkdir()
    (tmp_path / "infra" / "__main__.py").write_text(
        textwrap.dedent(
            """
            import pulumi, pulumi_aws as aws
            for name in pulumi.Config().require_object("buckets")["names"]:
                aws.s3.Bucket(name)
            pulumi.export("region", pulumi.Config("aws").require("region"))
            """
        )
    )
    graph = engine.run_project(tmp_path, stack="prod")
    assert graph.project == "teamstack"
    assert graph.stack == "prod"
    assert sorted(r.name for r in graph.of_type("aws:s3/bucket:Bucket")) == ["a", "b"]
    assert graph.stack_outputs == {"region": "eu-central-1"}
    assert graph.named("a").outputs["region"] == "eu-central-1"


def test_run_project_without_pulumi_yaml_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="Pulumi.yaml"):
        engine.run_project(tmp_path)


def test_component_outputs_are_recorded():
    graph = engine.run(lambda: _Box("box"))
    box = graph.named("box")
    assert graph.outputs_of(box) == {"bucket": graph.named("box-bucket").outputs["bucket"]}


def test_gateway_endpoints_have_a_prefix_list():
    def program():
        aws.ec2.VpcEndpoint(
            "s3",
            vpc_id="vpc-1",
            service_name="com.amazonaws.us-east-1.s3",
            vpc_endpoint_type="Gateway",
        )

    assert engine.run(program).named("s3").outputs["prefixListId"].startswith("pl-")


def test_provider_default_tags_reach_tags_all():
    def program():
        provider = aws.Provider(
            "p",
            region="us-east-1",
            default_tags=aws.ProviderDefaultTagsArgs(tags={"team": "a", "env": "dev"}),
        )
        aws.sns.Topic("t", tags={"env": "prod"}, opts=pulumi.ResourceOptions(provider=provider))

    topic = engine.run(program).named("t")
    assert topic.outputs["tagsAll"] == {"team": "a", "env": "prod"}


def test_a_run_leaves_no_open_event_loop_behind():
    # A loop left open is finalised whenever the collector reaches it, and on Python 3.11 a
    # failing `__del__` inside an `ast.parse` (pytest rewriting a module) corrupts the parser.
    import asyncio
    import gc

    def program():
        for index in range(5):
            aws.s3.Bucket(f"bucket-{index}")

    engine.run(program)
    gc.collect()
    open_loops = [
        obj
        for obj in gc.get_objects()
        if isinstance(obj, asyncio.AbstractEventLoop) and not obj.is_closed()
    ]
    assert open_loops == []


def test_the_monitor_answers_on_the_runs_own_thread():
    # The SDK hands each monitor call to the loop's default executor; the engine's runs them
    # inline, so a run starts no worker thread (a thread pool's hand-offs were two fifths of
    # a run's CPU).
    import threading

    threads_before = threading.active_count()
    threads_during: list[int] = []

    def program():
        first = aws.s3.Bucket("first")
        second = aws.s3.Bucket("second", tags={"peer": first.bucket})
        second.arn.apply(lambda _: threads_during.append(threading.active_count()))

    graph = engine.run(program)
    assert graph.named("second").inputs["tags"] == {"peer": graph.named("first").outputs["bucket"]}
    assert threads_during == [threads_before]


def test_run_now_steps_a_coroutine_and_waits_for_what_it_awaits():
    import asyncio

    from aistack.engine.pulumi_compat import run_now as _run_now

    async def plain() -> int:
        return 7

    assert _run_now(plain()) == 7

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        pending = loop.create_future()
        loop.call_soon(pending.set_result, 2)

        async def doubled() -> int:
            return 2 * await pending

        assert _run_now(doubled()) == 4
    finally:
        asyncio.set_event_loop(None)
        loop.close()
