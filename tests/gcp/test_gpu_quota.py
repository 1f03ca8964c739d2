"""gcp.GpuQuota: Cloud Quotas GPU preferences sized in GPUs from the pools, never lowering.

Platform facts these tests encode, with their sources:
- Quota ids are Cloud Quotas ids, not Compute metric names: `NVIDIA-L4-GPUS-per-project-
  region` (metric `NVIDIA_L4_GPUS`), Spot VMs in `PREEMPTIBLE-NVIDIA-...`, the project-wide
  `GPUS-ALL-REGIONS-per-project` (0 in new projects: "Quota 'GPUS_ALL_REGIONS' exceeded.
  Limit: 0.0 globally ... limit name = GPUS-ALL-REGIONS-per-project"), and the GPU family
  quota `GPUS-PER-GPU-FAMILY-per-project-region` with dimensions region and gpu_family
  (Compute Engine "Allocation quotas", GPU quota; Cloud Quotas "Configure dimensions":
  "Compute Engine also has ... gpu_family").
- `quota_config.preferred_value` is a string in pulumi-gcp 10 (SQuotaPreferenceQuotaConfig
  docstring: "Must be greater than or equal to -1. If set to -1 ... unlimited").
- The contact e-mail "is required for increase quota preferences" (Cloud Quotas v1
  QuotaPreference reference, contactEmail).
- One preference per quota and dimensions per project (QuotaPreference reference: "There
  is only one QuotaPreference resource for a quota value targeting a unique set of
  dimensions").
"""

import re

import pytest

from aistack import catalog, engine, gcp
from aistack.contracts.capacity import CapacityNeed
from aistack.engine.cloud import SimulatedCloud
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.engine.lifecycle import Account
from aistack.errors import ConfigError
from aistack.gcp.gpu_quota import current_value, preference_id

PREFERENCE = "gcp:cloudquota/sQuotaPreference:SQuotaPreference"
SERVICE = "gcp:projects/service:Service"
PROJECT = "team-ml-prod"
EMAIL = "ml-platform@example.com"


def _need(**overrides):
    return {
        "pool": "train",
        "region": "europe-west4",
        "machineTypes": ["a3-highgpu-8g"],
        "maxNodes": 2,
        "market": "spot",
        **overrides,
    }


def _stack(governance, *needs, pools=(), services=None, **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT, **(services or {})})
        gcp.GpuQuota(
            "gpus",
            {"governance": governance, "contactEmail": EMAIL, "needs": list(needs), **overrides},
            services=apis,
            pools=pools,
        )

    return program


def _preferences(graph):
    """{(quota id, dimensions): preferred value} of every preference in the graph."""
    return {
        (
            r.inputs["quotaId"],
            tuple(sorted((r.inputs.get("dimensions") or {}).items())),
        ): r.inputs["quotaConfig"]["preferredValue"]
        for r in graph.of_type(PREFERENCE)
    }


def test_a_spot_h100_pool_files_its_preemptible_family_and_global_quotas_in_gpus(run, governance):
    graph = run(_stack(governance, _need()))
    # 2 nodes x a3-highgpu-8g (8 H100 each) = 16 GPUs, Spot: the PREEMPTIBLE- quota.
    assert _preferences(graph) == {
        ("PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region", (("region", "europe-west4"),)): "16",
        (
            "GPUS-PER-GPU-FAMILY-per-project-region",
            (("gpu_family", "NVIDIA_H100"), ("region", "europe-west4")),
        ): "16",
        ("GPUS-ALL-REGIONS-per-project", ()): "16",
    }
    for pref in graph.of_type(PREFERENCE):
        assert pref.inputs["service"] == "compute.googleapis.com"
        assert pref.inputs["parent"] == f"projects/{PROJECT}"
        assert pref.inputs["contactEmail"] == EMAIL
        assert "train (2 x a3-highgpu-8g" in pref.inputs["justification"]
        # The API's id: <parent>/locations/global/quotaPreferences/<preference id>.
        assert (
            pref.id == f"projects/{PROJECT}/locations/global/quotaPreferences/{pref.inputs['name']}"
        )
        # Google decides on its own clock: pending until granted.
        assert pref.outputs["reconciling"] is True
        assert pref.outputs["quotaConfig"]["grantedValue"] == "0"


def test_an_on_demand_l4_pool_files_its_model_quota_and_no_family_quota(run, governance):
    graph = run(
        _stack(
            governance,
            _need(machineTypes=["g2-standard-8", "g2-standard-4"], maxNodes=3, market="on-demand"),
        )
    )
    assert _preferences(graph) == {
        ("NVIDIA-L4-GPUS-per-project-region", (("region", "europe-west4"),)): "3",
        ("GPUS-ALL-REGIONS-per-project", ()): "3",
    }


def test_pools_sharing_a_quota_are_summed_and_the_ceiling_counts_every_region(run, governance):
    graph = run(
        _stack(
            governance,
            _need(pool="a", maxNodes=1),
            _need(pool="b", maxNodes=1, surgeNodes=1),
            _need(pool="c", region="us-central1", machineTypes=["a3-highgpu-8g"], maxNodes=1),
            _need(pool="d", machineTypes=["a3-highgpu-8g"], maxNodes=1, market="on-demand"),
        )
    )
    found = _preferences(graph)
    west = (("region", "europe-west4"),)
    assert found[("PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region", west)] == "24"
    assert found[("NVIDIA-H100-GPUS-per-project-region", west)] == "8"
    # The family quota counts both markets; the ceiling both markets in every region.
    family_west = (("gpu_family", "NVIDIA_H100"), ("region", "europe-west4"))
    assert found[("GPUS-PER-GPU-FAMILY-per-project-region", family_west)] == "32"
    assert found[("GPUS-ALL-REGIONS-per-project", ())] == "40"


def test_a_pool_of_mixed_types_is_sized_on_its_largest(run, governance):
    graph = run(
        _stack(governance, _need(machineTypes=["a3-highgpu-1g", "a3-highgpu-4g"], maxNodes=3))
    )
    assert _preferences(graph)[("GPUS-ALL-REGIONS-per-project", ())] == "12"


def test_headroom_percent_rounds_up_to_whole_machines_of_the_smallest_type(run, governance):
    graph = run(_stack(governance, _need(maxNodes=1), headroomPercent=10))
    # 0.8 GPUs of headroom is no use to a VM that takes 8: one more a3-highgpu-8g.
    assert set(_preferences(graph).values()) == {"16"}
    graph = run(
        _stack(
            governance,
            _need(machineTypes=["a3-highgpu-8g", "a3-highgpu-2g"], maxNodes=2),
            headroomPercent=10,
        )
    )
    # 1.6 GPUs rounds up to one a3-highgpu-2g.
    assert set(_preferences(graph).values()) == {"18"}


def test_the_global_ceiling_can_be_left_to_the_organisation(run, governance):
    graph = run(_stack(governance, _need(), includeGlobalCeiling=False))
    assert ("GPUS-ALL-REGIONS-per-project", ()) not in _preferences(graph)


def test_a_granted_quota_above_the_need_is_never_lowered(run, governance, monkeypatch):
    monkeypatch.setattr(
        SimulatedCloud,
        "gcp_quotas",
        {
            "PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region/europe-west4": 64,
            # A region-and-family grant takes precedence over the family default.
            "GPUS-PER-GPU-FAMILY-per-project-region": 4,
            "GPUS-PER-GPU-FAMILY-per-project-region/europe-west4/NVIDIA_H100": 32,
            # Unlimited stays unlimited.
            "GPUS-ALL-REGIONS-per-project": -1,
        },
    )
    graph = run(_stack(governance, _need()))
    found = _preferences(graph)
    west = (("region", "europe-west4"),)
    assert found[("PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region", west)] == "64"
    family = (("gpu_family", "NVIDIA_H100"), ("region", "europe-west4"))
    assert found[("GPUS-PER-GPU-FAMILY-per-project-region", family)] == "32"
    assert found[("GPUS-ALL-REGIONS-per-project", ())] == "-1"
    for pref in graph.of_type(PREFERENCE):
        assert not pref.inputs.get("ignoreSafetyChecks")
        assert pref.outputs["reconciling"] is False  # nothing to increase


def test_a_lower_grant_is_raised_to_the_need(run, governance, monkeypatch):
    monkeypatch.setattr(
        SimulatedCloud,
        "gcp_quotas",
        {"PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region/europe-west4": 8},
    )
    found = _preferences(run(_stack(governance, _need())))
    assert (
        found[("PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region", (("region", "europe-west4"),))]
        == "16"
    )


def test_the_value_in_force_follows_cloud_quotas_dimension_precedence():
    # QuotaInfo.dimensionsInfos as pulumi-gcp returns them: `details` a list of one.
    infos = [
        {"dimensions": {}, "details": [{"value": "2"}], "applicableLocations": ["us-east1"]},
        {
            "dimensions": {"region": "us-central1"},
            "details": [{"value": "8"}],
            "applicableLocations": ["us-central1"],
        },
        {
            "dimensions": {"region": "us-central1", "gpu_family": "NVIDIA_H100"},
            "details": [{"value": "16"}],
            "applicableLocations": ["us-central1"],
        },
    ]
    assert current_value(infos, {"region": "us-central1", "gpu_family": "NVIDIA_H100"}) == 16
    assert current_value(infos, {"region": "us-central1", "gpu_family": "NVIDIA_H200"}) == 8
    assert current_value(infos, {"region": "us-east1"}) == 2
    # The REST shape (one QuotaDetails object) reads the same.
    assert current_value([{"dimensions": {}, "details": {"value": "3"}}], {}) == 3


def test_every_preference_waits_for_cloud_quotas_and_compute_and_is_kept(run, governance):
    graph = run(_stack(governance, _need()))
    assert missing_api_dependencies(graph) == []
    services = {r.urn: r.inputs["service"] for r in graph.of_type(SERVICE)}
    for pref in graph.of_type(PREFERENCE):
        waited = {services[u] for u in pref.dependencies if u in services}
        assert {"cloudquotas.googleapis.com", "compute.googleapis.com"} <= waited
        assert pref.retain_on_delete
        assert graph.component_of(pref).type == "aistack:index:GcpGpuQuota"


def test_preference_ids_are_stable_and_name_the_quota_not_the_stack():
    assert (
        preference_id(
            "PREEMPTIBLE-NVIDIA-H100-MEGA-GPUS-per-project-region", {"region": "asia-southeast1"}
        )
        == "aistack-preemptible-nvidia-h100-mega-gpus-asia-southeast1"
    )
    assert (
        preference_id(
            "GPUS-PER-GPU-FAMILY-per-project-region",
            {"region": "europe-west4", "gpu_family": "NVIDIA_H100"},
        )
        == "aistack-gpus-per-gpu-family-nvidia-h100-europe-west4"
    )
    assert preference_id("GPUS-ALL-REGIONS-per-project", {}) == "aistack-gpus-all-regions"


class _Pool:
    def quota_needs(self):
        return [
            CapacityNeed(
                "pool", ("g2-standard-48",), 2, "spot", surge_nodes=1, region="us-central1"
            )
        ]


def test_pool_components_report_their_needs(run, governance):
    graph = run(_stack(governance, pools=[_Pool()]))
    # g2-standard-48 has 4 L4; (2 + 1 surge) x 4 = 12.
    assert (
        _preferences(graph)[
            ("PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region", (("region", "us-central1"),))
        ]
        == "12"
    )


def test_every_bad_need_is_reported_at_once(run, governance):
    with pytest.raises(ConfigError) as caught:
        run(
            _stack(
                governance,
                _need(region="us-east1"),
                _need(pool="aws", machineTypes=["p5.48xlarge"]),
                _need(pool="typo", machineTypes=["a3-highgpu-9g"]),
                _need(pool="far", region="europe-west4", machineTypes=["g2-standard-4"]),
                _need(pool="dup"),
                _need(pool="dup"),
                _need(pool="zero", maxNodes=0),
                services={"services": ["compute.googleapis.com"]},
                contactEmail="not-an-email",
            )
        )
    problems = {p.field: p.message for p in caught.value.problems}
    # A bad count in one need does not hide the other needs' problems.
    assert "gpus.needs.6.maxNodes" in problems
    assert "not in governance.allowed_regions" in problems["gpus.needs.0.region"]
    assert "AWS instance type" in problems["gpus.needs.1.machineTypes.0"]
    assert "not a GPU machine type" in problems["gpus.needs.2.machineTypes.0"]
    assert "listed twice" in problems["gpus.needs.5.pool"]
    assert "cloudquotas.googleapis.com" in problems["gpus.services"]
    assert "not an e-mail address" in problems["gpus.contactEmail"]
    assert "gpus.needs.3.machineTypes.0" not in problems  # g2 is offered in europe-west4
    assert len(problems) == 7


def test_a_machine_type_the_regions_zones_do_not_offer_is_refused(run, governance):
    # A catalogued GCP region whose zones do not offer this machine type.
    everywhere = {r for t in catalog.instance_types("gcp") for r in t.regions}
    t, region = next(
        (t, r) for t in catalog.instance_types("gcp") for r in sorted(everywhere - set(t.regions))
    )
    governance["allowedRegions"] = [region]
    with pytest.raises(ConfigError, match=f"not offered in any zone of {region}") as caught:
        run(_stack(governance, _need(region=region, machineTypes=[t.name])))
    assert [p.field for p in caught.value.problems] == ["gpus.needs.0.machineTypes.0"]


@pytest.mark.parametrize("field", ["maxNodes", "surgeNodes"])
def test_counts_below_what_a_pool_can_run_are_refused(run, governance, field):
    with pytest.raises(ConfigError) as caught:
        run(_stack(governance, _need(**{field: -1}), _need(pool="b", maxNodes=0)))
    fields = {p.field for p in caught.value.problems}
    assert {f"gpus.needs.0.{field}", "gpus.needs.1.maxNodes"} <= fields


def test_a_stack_without_needs_is_refused(run, governance):
    with pytest.raises(ConfigError, match="nothing to size"):
        run(_stack(governance))


def test_the_simulated_api_refuses_a_metric_name_and_an_increase_without_email(run):
    import pulumi_gcp as raw

    def metric_name():
        raw.cloudquota.SQuotaPreference(
            "bad",
            parent=f"projects/{PROJECT}",
            service="compute.googleapis.com",
            quota_id="NVIDIA_L4_GPUS",
            dimensions={"region": "europe-west4"},
            contact_email=EMAIL,
            quota_config={"preferred_value": "4"},
        )

    def no_email():
        raw.cloudquota.SQuotaPreference(
            "bad",
            parent=f"projects/{PROJECT}",
            service="compute.googleapis.com",
            quota_id="NVIDIA-L4-GPUS-per-project-region",
            dimensions={"region": "europe-west4"},
            quota_config={"preferred_value": "4"},
        )

    with pytest.raises(Exception, match="metric name"):
        run(metric_name)
    with pytest.raises(Exception, match="contact_email is required"):
        run(no_email)


# ---- catalog: the quota ids pools and GpuQuota share --------------------------------------

#: Google's published forms (Compute Engine "Allocation quotas"; Cloud Quotas quota ids).
PER_MODEL = re.compile(r"(PREEMPTIBLE-)?NVIDIA-[A-Z0-9]+(-[A-Z0-9]+)*-GPUS-per-project-region")
GPU_FAMILY = re.compile(r"NVIDIA_[A-Z0-9]+(_[A-Z0-9]+)*")


@pytest.mark.parametrize("machine_type", [t.name for t in catalog.instance_types("gcp")])
def test_every_gcp_accelerator_in_the_catalog_has_quota_ids_in_googles_forms(machine_type):
    on_demand = catalog.gpu_quota_ids(machine_type, "on-demand")
    spot = catalog.gpu_quota_ids(machine_type, "spot")
    for quotas, prefix in ((on_demand, ""), (spot, "PREEMPTIBLE-")):
        scopes = [q.scope for q in quotas]
        assert scopes[0] == "per-model" and scopes[-1] == "global"
        model = quotas[0]
        assert PER_MODEL.fullmatch(model.quota_id) and model.quota_id.startswith(prefix)
        assert model.regional and not model.dimensions
        # The metric name maps onto the quota id: NVIDIA_L4_GPUS -> NVIDIA-L4-GPUS-...
        metric = catalog.gpu_quota(machine_type, quotas[0].market).quota_code  # type: ignore[arg-type]
        assert model.quota_id == metric.replace("_", "-") + "-per-project-region"
        assert quotas[-1].quota_id == "GPUS-ALL-REGIONS-per-project"
        assert not quotas[-1].regional
    assert on_demand[0].quota_id != spot[0].quota_id
    t = catalog.get(machine_type)
    families = [q for q in on_demand if q.scope == "family"]
    # Hopper and newer also count against the GPU family quota.
    assert bool(families) == (t.gpu_model in ("H100", "H200", "B200"))
    for q in families:
        assert q.quota_id == "GPUS-PER-GPU-FAMILY-per-project-region"
        assert GPU_FAMILY.fullmatch(q.dimensions["gpu_family"])


def test_aistack_check_passes_the_c1_rules_on_a_gpu_quota_covering_its_instance(tmp_path):
    import json
    import textwrap

    from typer.testing import CliRunner

    from aistack.cli import app

    (tmp_path / "Pulumi.yaml").write_text("name: tiny-gcp\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n  gcp:project: team-ml-prod\n  gcp:region: europe-west4\n"
    )
    (tmp_path / "__main__.py").write_text(
        textwrap.dedent(
            """
            import pulumi_gcp
            from aistack import gcp
            G = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
            apis = gcp.ProjectServices("apis", {"project": "team-ml-prod"})
            gcp.GpuQuota("gpus", {"governance": G, "contactEmail": "ml@example.com",
                "needs": [{"pool": "dev", "region": "europe-west4",
                           "machineTypes": ["g2-standard-8"], "maxNodes": 1,
                           "market": "on-demand"}]}, services=apis)
            pulumi_gcp.compute.Instance("box", machine_type="g2-standard-8",
                zone="europe-west4-a", network_interfaces=[{"network": "default"}],
                boot_disk={"initialize_params": {"image": "projects/p/global/images/i-1"}})
            """
        )
    )
    result = CliRunner().invoke(app, ["check", str(tmp_path), "--format", "json"])
    findings = {
        (f["rule_id"], f["resource_name"]): f["status"]
        for item in json.loads(result.output)["items"]
        for f in item.get("findings", [])
    }
    assert findings[("AIS-C1-02", "box")] == "compliant", result.output
    c1_03 = {name: s for (rule, name), s in findings.items() if rule == "AIS-C1-03"}
    assert c1_03 and set(c1_03.values()) == {"compliant"}


def test_the_simulated_quota_info_answers_as_cloud_quotas_does(monkeypatch):
    # QuotaInfo.dimensionsInfos (Cloud Quotas v1 reference): an entry without dimensions
    # holds the default for the locations it lists; a location with its own value has its
    # own entry; a global quota's one entry applies to ["global"].
    from aistack.engine.gcp_cloud.quotas import quota_info

    monkeypatch.setattr(
        SimulatedCloud, "gcp_quotas", {"NVIDIA-L4-GPUS-per-project-region/us-central1": 8}
    )
    cloud = SimulatedCloud({"gcp:project": PROJECT})
    args = {"parent": f"projects/{PROJECT}", "service": "compute.googleapis.com"}
    regional = quota_info(cloud, {**args, "quotaId": "NVIDIA-L4-GPUS-per-project-region"})
    default, override = regional["dimensionsInfos"]
    assert default["dimensions"] == {} and default["details"] == [{"value": "0"}]
    assert "us-central1" not in default["applicableLocations"]
    assert override == {
        "dimensions": {"region": "us-central1"},
        "details": [{"value": "8"}],
        "applicableLocations": ["us-central1"],
    }
    assert current_value(regional["dimensionsInfos"], {"region": "us-central1"}) == 8
    assert current_value(regional["dimensionsInfos"], {"region": "europe-west4"}) == 0
    ceiling = quota_info(cloud, {**args, "quotaId": "GPUS-ALL-REGIONS-per-project"})
    assert ceiling["dimensionsInfos"] == [
        {"dimensions": {}, "details": [{"value": "0"}], "applicableLocations": ["global"]}
    ]
    with pytest.raises(Exception, match="metric name"):
        quota_info(cloud, {**args, "quotaId": "NVIDIA_L4_GPUS"})


def test_two_gpu_quotas_filing_the_same_quota_in_one_project_fail_as_on_gcp(run, governance):
    # One QuotaPreference per quota and dimensions per project (QuotaPreference reference):
    # size one GpuQuota for every pool of the project instead.
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        for name in ("a", "b"):
            gcp.GpuQuota(
                name,
                {"governance": governance, "contactEmail": EMAIL, "needs": [_need(pool=name)]},
                services=apis,
            )

    with pytest.raises(Exception, match="already exists"):
        run(program)


def _up(program, account):
    graph = engine.run(
        program,
        config={"gcp:project": PROJECT, "gcp:region": "europe-west4"},
        existing=account.existing(),
    )
    return graph, account.up(graph)


def test_a_destroyed_stack_comes_up_again_by_adopting_what_it_filed(governance):
    # `destroy` only forgets a preference (terraform-provider-google
    # resource_cloud_quotas_quota_preference.go: Delete logs "cannot be deleted from Google
    # Cloud" and clears the id; Create POSTs ...quotaPreferences?quotaPreferenceId=), so
    # the next create of the same id meets the first one. adoptFiled imports it instead.
    account = Account()
    first, problems = _up(_stack(governance, _need()), account)
    assert problems == []
    account.destroy(first)
    again, problems = _up(_stack(governance, _need()), account)
    assert {p.name.split(" (")[0] for p in problems} == {r.name for r in again.of_type(PREFERENCE)}
    adopted, problems = _up(_stack(governance, _need(), adoptFiled=True), account)
    assert problems == []
    assert {r.import_id for r in adopted.of_type(PREFERENCE)} == {
        f"projects/{PROJECT}/locations/global/quotaPreferences/{r.inputs['name']}"
        for r in adopted.of_type(PREFERENCE)
    }


def test_adopting_preferences_nobody_filed_fails_as_an_import_does(governance):
    # The import of an id the project does not hold fails; adoptFiled is for the deployments
    # after the first.
    account = Account()
    _, problems = _up(_stack(governance, _need(), adoptFiled=True), account)
    assert problems and all("does not hold" in p.what for p in problems)


def _box_and_quota(run, governance, mode, max_nodes=1):
    import pulumi_gcp

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        gcp.GpuQuota(
            "gpus",
            {
                "governance": governance,
                "contactEmail": EMAIL,
                "mode": mode,
                "needs": [
                    _need(machineTypes=["g2-standard-8"], maxNodes=max_nodes, market="on-demand")
                ],
            },
            services=apis,
        )
        pulumi_gcp.compute.Instance(
            "box",
            machine_type="g2-standard-8",
            zone="europe-west4-a",
            network_interfaces=[{"network": "default"}],
            boot_disk={"initialize_params": {"image": "projects/p/global/images/i-1"}},
        )

    return run(program)


def test_check_mode_files_nothing_and_records_what_the_project_must_file(run, governance):
    graph = _box_and_quota(run, governance, "check")
    assert graph.of_type(PREFERENCE) == []
    (component,) = graph.of_type("aistack:index:GcpGpuQuota")
    requests = graph.registered_outputs[component.urn]["requests"]
    assert {r["quota_id"]: r["requested_gpus"] for r in requests.values()} == {
        "NVIDIA-L4-GPUS-per-project-region": 1,
        "GPUS-ALL-REGIONS-per-project": 1,
    }
    # The simulated project is new: every quota in force is 0, which the warning names.
    assert {r["current_value"] for r in requests.values()} == {0.0}


def test_adopt_filed_can_name_the_filed_preferences_and_refuses_others(run, governance):
    # A new pool adds a quota whose preference nobody filed: importing it would fail, so
    # only the filed ones are named.
    filed = preference_id("GPUS-ALL-REGIONS-per-project", {})
    graph = run(_stack(governance, _need(), adoptFiled=[filed]))
    imported = {r.inputs["name"]: r.import_id for r in graph.of_type(PREFERENCE)}
    assert imported.pop(filed).endswith(f"/quotaPreferences/{filed}")
    assert imported and not any(imported.values())
    with pytest.raises(ConfigError, match="adoptFiled"):
        run(_stack(governance, _need(), adoptFiled=["aistack-nothing-filed"]))
