"""On an AWS Batch host the spot watch flushes checkpoints with a running job's role.

Platform facts (amazon-ecs-agent @ 8dfceca6): the agent puts the path of a task's
credentials into each of its containers as AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
(agent/api/task/task.go, initializeCredentialsEndpoint); ecs-init's nat OUTPUT rule
redirects the host's own requests for 169.254.170.2:80 to the agent
(ecs-init/exec/iptables/iptables.go, getOutputChainArgs), so a host process can fetch them;
and the agent removes a task's credentials once it stops (agent/engine/task_manager.go,
cleanupCredentials), so they must be taken before the trainer is signalled and exits. The
AWS CLI resolves AWS_CONTAINER_CREDENTIALS_RELATIVE_URI before the instance metadata service
and prints what it resolved with `aws configure export-credentials --format env-no-export`
(AWS CLI reference, configure export-credentials: "AWS_ACCESS_KEY_ID=EXAMPLE").
"""

from __future__ import annotations

import pytest

ACTION = '{"action": "terminate", "time": "2024-06-01T10:02:00Z"}'
CHECKPOINTS = "s3://team-checkpoints/runs"
JOB, OTHER_POOL, AGENT = "c0ffee000002", "c0ffee000004", "c0ffee000009"
JOB_CREDENTIALS = "/v2/credentials/16105516-51c7-41a2-ad8a-ba7411f309a0"

# docker answers each `inspect --format` template as the real CLI would for three
# containers: this pool's Batch job (opted in to USR1), a job of another pool, the ECS agent.
DOCKER_STUB = r"""
case $1 in
  ps) printf '%s\n' c0ffee000002 c0ffee000004 c0ffee000009; exit 0 ;;
  inspect)
    if [[ $3 == *AWS_CONTAINER_CREDENTIALS_RELATIVE_URI* ]]; then
      printf '%s\n' "c0ffee000004ffff|/v2/credentials/other|s3://other-checkpoints/runs"
      [[ -e $STUB_DIR/job-gone ]] ||
        printf '%s\n' "c0ffee000002ffff|$JOB_URI|s3://team-checkpoints/runs"
      printf '%s\n' "c0ffee000009ffff||"
    else
      printf '%s\n' "c0ffee000002ffff||USR1" "c0ffee000004ffff||" "c0ffee000009ffff||"
    fi
    exit 0 ;;
esac
"""
# The CLI stub resolves credentials the way the real chain does here: from the container
# endpoint when AWS_CONTAINER_CREDENTIALS_RELATIVE_URI is set (the job's role), else from
# the metadata service (the instance role). `s3 sync` records whose keys it ran with.
AWS_STUB = r"""
if [[ $1 == configure && $2 == export-credentials ]]; then
  [[ $AWS_CONTAINER_CREDENTIALS_RELATIVE_URI == "$JOB_URI" ]] || exit 255
  printf 'AWS_ACCESS_KEY_ID=ASIAJOBROLE\nAWS_SECRET_ACCESS_KEY=secret\n'
  printf 'AWS_SESSION_TOKEN=token\nAWS_CREDENTIAL_EXPIRATION=2024-06-01T16:00:00Z\n'
  exit 0
fi
if [[ $1 == s3 && $2 == sync ]]; then
  printf '%s\n' "${AWS_ACCESS_KEY_ID:-instance-role}" >>"$STUB_DIR/sync-keys"
  exit 0
fi
"""


@pytest.fixture
def batch_host(node):
    node.stub("docker", DOCKER_STUB)
    node.stub("aws", AWS_STUB)
    node.env.update(
        JOB_URI=JOB_CREDENTIALS,
        AISTACK_SCHEDULER="batch",
        AISTACK_CHECKPOINT_DIR=str(node.cache / "checkpoints"),
        AISTACK_CHECKPOINT_URI=CHECKPOINTS,
        AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="0",
    )
    node.imds("meta-data/spot/instance-action", ACTION)
    return node


def _sync_keys(node) -> list[str]:
    path = node.stubs / "sync-keys"
    return path.read_text().split() if path.exists() else []


def test_the_flush_uses_this_pools_job_role_taken_before_the_trainer_is_signalled(batch_host):
    batch_host.run("spot-watch.sh", "--once")
    assert _sync_keys(batch_host) == ["ASIAJOBROLE"]
    steps = [call[:2] for call in batch_host.calls() if call[0] in ("docker", "aws")]
    exported = steps.index(["aws", "configure"])
    signalled = steps.index(["docker", "kill"])
    assert exported < signalled, "the agent drops the credentials once the signalled job exits"
    assert ["docker", "kill"] in steps and steps.count(["docker", "kill"]) == 1


def test_without_a_running_job_of_the_pool_the_flush_has_only_the_instance_role(batch_host):
    (batch_host.stubs / "job-gone").touch()
    batch_host.run("spot-watch.sh", "--once")
    assert _sync_keys(batch_host) == ["instance-role"]
    assert "no running job of this pool lent its credentials" in batch_host.log("spot-watch")


def test_a_standing_pool_flushes_with_the_instance_role_as_before(batch_host):
    batch_host.run("spot-watch.sh", "--once", AISTACK_SCHEDULER="asg")
    assert _sync_keys(batch_host) == ["instance-role"]
    assert [call for call in batch_host.calls("aws") if call[0] == "configure"] == []
