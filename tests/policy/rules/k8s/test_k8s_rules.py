"""Kubernetes rules: S1 (default deny, Pod Security restricted), C3 (GPU and load balancer
quota) and C6 (no cloud keys, no API token by default), each compliant with
k8s.TeamNamespace and violated by the bare objects a team might write instead."""

import base64
import json

import pulumi_kubernetes as k8s
import pytest

from aistack import k8s as aistack_k8s

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
ROLE_ARN = "arn:aws:iam::123456789012:role/ml-trainer"


def _team():
    aistack_k8s.TeamNamespace(
        "ml-train",
        {
            "team": "ml",
            "gpus": 4,
            "governance": GOVERNANCE,
            "serviceAccounts": [
                {"name": "trainer", "identity": "eks-pod-identity", "awsRoleArn": ROLE_ARN},
                {"name": "operator", "needsApiToken": True},
            ],
        },
    )


def _bare_namespace(labels=None):
    k8s.core.v1.Namespace("bare", metadata={"name": "bare", "labels": labels or {}})


# ---- S1: default deny ------------------------------------------------------------------


def test_s1_03_a_team_namespace_denies_by_default(verdicts):
    assert verdicts("AIS-S1-03", _team) == {"ml-train-namespace": "compliant"}


@pytest.mark.parametrize(
    "spec",
    [
        None,  # no policy at all
        {"podSelector": {}, "policyTypes": ["Ingress"]},  # egress left open
        # Selects every pod but allows everything in: not a deny.
        {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": [{}]},
        # Denies only the pods labelled app=db.
        {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Ingress", "Egress"]},
    ],
)
def test_s1_03_a_namespace_without_a_full_default_deny_fails(verdicts, spec):
    def program():
        _bare_namespace()
        if spec is not None:
            k8s.networking.v1.NetworkPolicy(
                "deny", metadata={"name": "deny", "namespace": "bare"}, spec=spec
            )

    assert verdicts("AIS-S1-03", program) == {"bare": "non-compliant"}


def test_s1_03_a_deny_in_another_namespace_does_not_count(verdicts):
    def program():
        _bare_namespace()
        k8s.networking.v1.NetworkPolicy(
            "deny",
            metadata={"name": "deny", "namespace": "other"},
            spec={"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
        )

    assert verdicts("AIS-S1-03", program) == {"bare": "non-compliant"}


# ---- S1: Pod Security ------------------------------------------------------------------


def test_s1_04_a_team_namespace_enforces_restricted_pinned(verdicts):
    assert verdicts("AIS-S1-04", _team) == {"ml-train-namespace": "compliant"}


@pytest.mark.parametrize(
    "labels",
    [
        {},
        {
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/enforce-version": "v1.30",
        },
        {"pod-security.kubernetes.io/enforce": "restricted"},  # follows the cluster
        {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
        },
        # warn alone admits everything
        {
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/warn-version": "v1.30",
        },
    ],
)
def test_s1_04_a_namespace_not_enforcing_pinned_restricted_fails(verdicts, labels):
    assert verdicts("AIS-S1-04", lambda: _bare_namespace(labels)) == {"bare": "non-compliant"}


PRIVILEGED = {
    "pod-security.kubernetes.io/enforce": "privileged",
    "pod-security.kubernetes.io/enforce-version": "v1.30",
}


def test_s1_04_a_node_agents_namespace_may_be_privileged_with_its_reason(verdicts):
    def program():
        k8s.core.v1.Namespace(
            "dcgm",
            metadata={
                "name": "dcgm-exporter",
                "labels": PRIVILEGED,
                "annotations": {"aistack.dev/privileged-because": "reads the kubelet's socket"},
            },
        )

    assert verdicts("AIS-S1-04", program) == {"dcgm": "compliant"}


def test_s1_04_a_team_namespace_cannot_declare_itself_privileged(verdicts):
    def program():
        k8s.core.v1.Namespace(
            "bare",
            metadata={
                "name": "bare",
                "labels": {**PRIVILEGED, "aistack.dev/tier": "train"},
                "annotations": {"aistack.dev/privileged-because": "convenience"},
            },
        )

    assert verdicts("AIS-S1-04", program) == {"bare": "non-compliant"}


# ---- C3: quota -------------------------------------------------------------------------


def test_c3_05_a_team_namespace_caps_gpus_and_load_balancers(verdicts):
    assert verdicts("AIS-C3-07", _team) == {"ml-train-namespace": "compliant"}


@pytest.mark.parametrize(
    "hard",
    [
        None,
        {"requests.cpu": "64", "services.loadbalancers": "0"},  # no GPU cap
        # Extended resources are quota'd only with the requests. prefix.
        {"nvidia.com/gpu": "8", "services.loadbalancers": "0"},
        {"limits.nvidia.com/gpu": "8", "services.loadbalancers": "0"},
        {"requests.nvidia.com/gpu": "8"},  # load balancers uncapped
    ],
)
def test_c3_05_a_namespace_without_gpu_and_load_balancer_caps_fails(verdicts, hard):
    def program():
        _bare_namespace()
        if hard is not None:
            k8s.core.v1.ResourceQuota(
                "quota", metadata={"name": "q", "namespace": "bare"}, spec={"hard": hard}
            )

    assert verdicts("AIS-C3-07", program) == {"bare": "non-compliant"}


# ---- C6: cloud keys --------------------------------------------------------------------

GOOGLE_KEY = json.dumps(
    {"type": "service_account", "project_id": "p", "private_key_id": "1", "private_key": "-"}
)


def _secret(**fields):
    def program():
        k8s.core.v1.Secret("creds", metadata={"namespace": "ml"}, **fields)

    return program


def test_c6_09_a_secret_with_an_api_token_for_another_service_passes(verdicts):
    assert verdicts("AIS-C6-10", _secret(string_data={"WANDB_API_KEY": "x"})) == {
        "creds": "compliant"
    }


@pytest.mark.parametrize(
    "fields",
    [
        {"string_data": {"AWS_SECRET_ACCESS_KEY": "x"}},
        {"string_data": {"aws-access-key-id": "x"}},
        {"string_data": {"key": "AKIAABCDEFGHIJKLMNOP"}},
        {"string_data": {"credentials": "[default]\naws_secret_access_key = x"}},
        {"string_data": {"key.json": GOOGLE_KEY}},
        {"data": {"sa.json": base64.b64encode(GOOGLE_KEY.encode()).decode()}},
    ],
)
def test_c6_09_a_secret_holding_cloud_keys_fails(verdicts, fields):
    assert verdicts("AIS-C6-10", _secret(**fields)) == {"creds": "non-compliant"}


def test_c6_09_cloud_keys_in_a_container_environment_fail(verdicts):
    def program():
        k8s.batch.v1.Job(
            "train",
            metadata={"namespace": "ml"},
            spec={
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "trainer",
                                "image": "trainer",
                                "env": [{"name": "AWS_ACCESS_KEY_ID", "value": "x"}],
                            }
                        ],
                    }
                }
            },
        )
        k8s.apps.v1.Deployment(
            "serve",
            metadata={"namespace": "ml"},
            spec={
                "selector": {"matchLabels": {"app": "s"}},
                "template": {
                    "metadata": {"labels": {"app": "s"}},
                    "spec": {
                        "containers": [
                            {"name": "s", "image": "s", "env": [{"name": "PORT", "value": "80"}]}
                        ]
                    },
                },
            },
        )

    assert verdicts("AIS-C6-10", program) == {"train": "non-compliant", "serve": "compliant"}


# ---- C6: API token ---------------------------------------------------------------------


def test_c6_10_team_accounts_mount_no_token_unless_they_declare_the_need(verdicts):
    assert verdicts("AIS-C6-11", _team) == {
        "ml-train-sa-trainer": "compliant",
        "ml-train-sa-operator": "compliant",
    }


@pytest.mark.parametrize("automount", [None, True])
def test_c6_10_an_account_that_mounts_its_token_silently_fails(verdicts, automount):
    def program():
        k8s.core.v1.ServiceAccount(
            "sa",
            metadata={"name": "trainer", "namespace": "ml"},
            automount_service_account_token=automount,
        )

    assert verdicts("AIS-C6-11", program) == {"sa": "non-compliant"}


# ---- G6: third parties -------------------------------------------------------------------


def test_g6_02_a_team_namespace_declares_its_third_parties(verdicts):
    assert verdicts("AIS-G6-02", _team) == {"ml-train-namespace": "compliant"}


def test_g6_02_a_namespace_without_the_declaration_fails(verdicts):
    assert verdicts("AIS-G6-02", _bare_namespace) == {"bare": "non-compliant"}
