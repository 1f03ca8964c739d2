"""Google resources in the Terraform plan: types from pulumi-gcp's bridge metadata, Terraform's
block names, references by name that keep their planned value.

The types and renames are data (aistack/scan/data/gcp_terraform.json, written by
tools/refresh_gcp_terraform_types.py from pulumi-gcp's
provider/cmd/pulumi-resource-gcp/bridge-metadata.json at the commit the file names).
"""

from __future__ import annotations

import importlib
import json
import re

import pulumi_gcp as gcp
import pytest

from aistack import engine
from aistack.scan import to_terraform_plan
from aistack.scan.tfplan import GOOGLE_PROVIDER_NAME, gcp_types, list_attributes, terraform_type
from tests.scan import gcp_programs

#: Every Google type aistack's GCP components register (these and the WorkloadIdentity,
#: ContainerRegistry, BudgetGuard and GpuQuota branches), with Terraform's name for it
#: (registry.terraform.io/providers/hashicorp/google, each resource's page title).
TOKENS = {
    "gcp:projects/service:Service": "google_project_service",
    "gcp:storage/bucket:Bucket": "google_storage_bucket",
    "gcp:storage/bucketObject:BucketObject": "google_storage_bucket_object",
    "gcp:storage/bucketIAMMember:BucketIAMMember": "google_storage_bucket_iam_member",
    "gcp:kms/keyRing:KeyRing": "google_kms_key_ring",
    "gcp:kms/cryptoKey:CryptoKey": "google_kms_crypto_key",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": "google_kms_crypto_key_iam_member",
    "gcp:projects/iAMMember:IAMMember": "google_project_iam_member",
    "gcp:projects/iAMCustomRole:IAMCustomRole": "google_project_iam_custom_role",
    "gcp:serviceaccount/account:Account": "google_service_account",
    "gcp:serviceaccount/iAMMember:IAMMember": "google_service_account_iam_member",
    "gcp:iam/workloadIdentityPool:WorkloadIdentityPool": "google_iam_workload_identity_pool",
    "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider": (
        "google_iam_workload_identity_pool_provider"
    ),
    "gcp:artifactregistry/repository:Repository": "google_artifact_registry_repository",
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": (
        "google_artifact_registry_repository_iam_member"
    ),
    "gcp:billing/budget:Budget": "google_billing_budget",
    "gcp:pubsub/topic:Topic": "google_pubsub_topic",
    "gcp:pubsub/topicIAMMember:TopicIAMMember": "google_pubsub_topic_iam_member",
    "gcp:pubsub/subscription:Subscription": "google_pubsub_subscription",
    "gcp:monitoring/notificationChannel:NotificationChannel": (
        "google_monitoring_notification_channel"
    ),
    "gcp:cloudfunctionsv2/function:Function": "google_cloudfunctions2_function",
    "gcp:cloudfunctionsv2/functionIamMember:FunctionIamMember": (
        "google_cloudfunctions2_function_iam_member"
    ),
    "gcp:cloudquota/sQuotaPreference:SQuotaPreference": "google_cloud_quotas_quota_preference",
    "gcp:compute/instanceTemplate:InstanceTemplate": "google_compute_instance_template",
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager": (
        "google_compute_region_instance_group_manager"
    ),
    "gcp:compute/network:Network": "google_compute_network",
    "gcp:compute/subnetwork:Subnetwork": "google_compute_subnetwork",
    "gcp:compute/firewall:Firewall": "google_compute_firewall",
    "gcp:compute/router:Router": "google_compute_router",
    "gcp:compute/routerNat:RouterNat": "google_compute_router_nat",
    "gcp:container/cluster:Cluster": "google_container_cluster",
    "gcp:container/nodePool:NodePool": "google_container_node_pool",
}


def _sdk_class(token: str):
    module_path, _, name = token.partition(":")[2].partition(":")
    module = importlib.import_module(f"pulumi_gcp.{module_path.split('/')[0]}")
    return getattr(module, name)


@pytest.mark.parametrize(("token", "expected"), sorted(TOKENS.items()))
def test_each_google_token_maps_to_its_terraform_type(token, expected):
    assert terraform_type(token) == expected
    assert gcp_types()["resources"][token]["terraform"] == expected


@pytest.mark.parametrize("token", sorted(TOKENS))
def test_each_mapped_token_is_a_resource_of_the_installed_pulumi_gcp(token):
    # `pulumi.type_token` stores the token on the class as `pulumi_type`.
    assert _sdk_class(token).pulumi_type == token


def test_the_mapping_data_names_its_source_and_date():
    data = gcp_types()
    assert data["repository"] == "https://github.com/pulumi/pulumi-gcp"
    assert re.fullmatch(r"[0-9a-f]{40}", data["commit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", data["commit_date"])
    assert len(data["resources"]) > 1400
    # The naming rule breaks for a third of the types: why the table exists.
    assert terraform_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference") != (
        "google_cloudquota_s_quota_preference"
    )


def test_a_token_newer_than_the_data_falls_back_to_the_naming_rule():
    assert terraform_type("gcp:newservice/thingBox:ThingBox") == "google_newservice_thing_box"


@pytest.fixture(scope="module")
def plan():
    return to_terraform_plan(engine.run(gcp_programs.mappings, config=gcp_programs.CONFIG))


def _resource(plan, address, section="planned_values"):
    for resource in plan[section]["root_module"]["resources"]:
        if resource["address"] == address:
            return resource
    raise KeyError(address)


def test_pulumi_plural_blocks_get_terraforms_singular_names(plan):
    bucket = _resource(plan, "google_storage_bucket.ok-bucket")["values"]
    rule = bucket["lifecycle_rule"][0]
    assert rule["condition"][0]["matches_prefix"] == ["tmp/"]
    assert "lifecycle_rules" not in bucket
    firewall = _resource(plan, "google_compute_firewall.ok-firewall")["values"]
    assert firewall["allow"] == [{"protocol": "tcp", "ports": ["22"]}]
    template = _resource(plan, "google_compute_instance_template.bad-template")["values"]
    assert template["network_interface"][0]["access_config"] == [{}]
    assert template["disk"][0]["boot"] is True
    node_config = _resource(plan, "google_container_node_pool.ok-pool-gpu")["values"][
        "node_config"
    ][0]
    assert node_config["guest_accelerator"] == [{"type": "nvidia-l4", "count": 1}]
    assert node_config["taint"][0]["effect"] == "NO_SCHEDULE"
    nat = _resource(plan, "google_compute_router_nat.ok-nat")["values"]
    assert nat["subnetwork"][0]["source_ip_ranges_to_nat"] == ["ALL_IP_RANGES"]
    group = _resource(plan, "google_compute_region_instance_group_manager.ok-group")["values"]
    assert "version" in group and "versions" not in group


def test_names_terraform_spells_plural_stay_plural(plan):
    budget = _resource(plan, "google_billing_budget.ok-budget")["values"]
    assert budget["threshold_rules"] == [{"threshold_percent": 0.5}]
    subnet = _resource(plan, "google_compute_subnetwork.ok-subnet")["values"]
    assert subnet["secondary_ip_range"][0]["range_name"] == "pods"


def test_a_reference_by_name_keeps_its_value_and_one_by_id_does_not(plan):
    """Terraform knows a configured name at plan time (checkov's CKV_GCP_62 reads the
    logging block's log_bucket value) but not a new resource's id."""
    address = "google_storage_bucket.ok-bucket"
    logging = _resource(plan, address)["values"]["logging"][0]
    assert logging["log_bucket"].startswith("ok-logs-")
    expression = _resource(plan, address, "configuration")["expressions"]["logging"][0]
    assert expression["log_bucket"]["references"][0] == "google_storage_bucket.ok-logs.name"
    member = _resource(plan, "google_kms_crypto_key_iam_member.ok-key-user")
    assert "crypto_key_id" not in member["values"]
    expressions = _resource(plan, "google_kms_crypto_key_iam_member.ok-key-user", "configuration")
    assert expressions["expressions"]["crypto_key_id"]["references"][0] == (
        "google_kms_crypto_key.ok-key.id"
    )


def test_autonamed_resources_carry_their_name_as_terraform_config_would(plan):
    assert _resource(plan, "google_storage_bucket.ok-logs")["values"]["name"].startswith("ok-logs-")


def test_google_resources_name_the_google_provider_and_the_stacks_project(plan):
    resources = plan["planned_values"]["root_module"]["resources"]
    assert {r["provider_name"] for r in resources} == {GOOGLE_PROVIDER_NAME}
    configured = {
        r["provider_config_key"] for r in plan["configuration"]["root_module"]["resources"]
    }
    assert configured == {"google"}
    google = plan["configuration"]["provider_config"]["google"]
    assert google["expressions"]["project"] == {"constant_value": gcp_programs.PROJECT}
    assert "aws" not in plan["configuration"]["provider_config"]


def test_every_key_is_snake_case_and_no_plural_pulumi_block_name_survives(plan):
    json.dumps(plan)
    graph = engine.run(gcp_programs.mappings, config=gcp_programs.CONFIG)
    renames = {
        (tf_type, path): emitted
        for tf_type, path, emitted in list_attributes(graph)
        if path.rpartition(".")[2] != emitted
    }
    assert renames[("google_compute_firewall", "allows")] == "allow"

    def keys(block):
        for key, value in block.items():
            yield key
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        yield from keys(item)

    bad = {
        (r["address"], key)
        for r in plan["planned_values"]["root_module"]["resources"]
        for key in keys({k: v for k, v in r["values"].items() if k not in ("labels", "metadata")})
        if not re.fullmatch(r"[a-z0-9_]+", key)
    }
    assert bad == set()


def test_a_literal_equal_to_a_name_is_no_reference_when_it_did_not_come_from_it():
    def program():
        logs = gcp.storage.Bucket("logs", name="shared-logs", location=gcp_programs.REGION)
        gcp.storage.Bucket(
            "from-output",
            location=gcp_programs.REGION,
            logging=gcp.storage.BucketLoggingArgs(log_bucket=logs.name),
        )
        gcp.storage.Bucket(
            "typed-in",
            location=gcp_programs.REGION,
            logging=gcp.storage.BucketLoggingArgs(log_bucket="shared-logs"),
        )

    plan = to_terraform_plan(engine.run(program, config=gcp_programs.CONFIG))
    wired = _resource(plan, "google_storage_bucket.from-output", "configuration")["expressions"]
    typed = _resource(plan, "google_storage_bucket.typed-in", "configuration")["expressions"]
    assert wired["logging"][0]["log_bucket"]["references"][0] == "google_storage_bucket.logs.name"
    assert "logging" not in typed
    assert _resource(plan, "google_storage_bucket.typed-in")["values"]["logging"] == [
        {"log_bucket": "shared-logs"}
    ]
