"""dataset-sync.sh: the pinned dataset version is synced once into a cache keyed by version."""

from __future__ import annotations

URI = "s3://team-datasets/datasets/imagenet"


def sync(node, version: str = "v3", check: bool = True, **env: str):
    return node.run(
        "dataset-sync.sh",
        check=check,
        AISTACK_DATASET_URI=URI,
        AISTACK_DATASET_VERSION=version,
        AISTACK_SYNC_CONCURRENCY="32",
        AISTACK_SYNC_RETRY_SECONDS="0",
        **env,
    )


def test_first_boot_syncs_the_version_with_parallel_transfers_and_marks_it_complete(node):
    result = sync(node)
    dest = node.cache / "datasets" / "imagenet" / "v3"
    assert node.calls("aws") == [
        ["configure", "set", "default.s3.max_concurrent_requests", "32"],
        ["s3", "sync", f"{URI}/v3/", str(dest), "--only-show-errors"],
    ]
    assert (dest / "part-00000").exists()
    marker = (dest / ".aistack-complete").read_text()
    assert "version=v3\n" in marker and f"source={URI}/v3/\n" in marker
    assert "completed_at=" in marker
    assert result.stdout.strip() == str(dest)
    assert (node.cache / "datasets" / "imagenet" / "current").resolve() == dest


def test_second_boot_with_the_same_version_does_not_call_aws_at_all(node):
    sync(node)
    node.clear_calls()
    result = sync(node)
    assert node.calls("aws") == []
    assert "cache hit" in result.stderr


def test_a_new_version_syncs_into_its_own_directory(node):
    sync(node, "v3")
    node.clear_calls()
    sync(node, "v4")
    v4 = node.cache / "datasets" / "imagenet" / "v4"
    assert ["s3", "sync", f"{URI}/v4/", str(v4), "--only-show-errors"] in node.calls("aws")
    assert (v4 / ".aistack-complete").read_text().startswith("version=v4\n")
    assert (node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete").exists()
    assert (node.cache / "datasets" / "imagenet" / "current").resolve() == v4


def test_a_failed_sync_is_retried_then_leaves_no_marker(node):
    node.answer("aws-s3-sync", rc=1)
    result = sync(node, check=False, AISTACK_SYNC_ATTEMPTS="2")
    dest = node.cache / "datasets" / "imagenet" / "v3"
    assert result.returncode == 1
    assert [c for c in node.calls("aws") if c[:2] == ["s3", "sync"]] == [
        ["s3", "sync", f"{URI}/v3/", str(dest), "--only-show-errors"]
    ] * 2
    assert not (dest / ".aistack-complete").exists()
    assert not (node.cache / "datasets" / "imagenet" / "current").exists()
    # The next boot is not fooled into a cache hit.
    (node.stubs / "aws-s3-sync.rc").unlink()
    node.clear_calls()
    sync(node)
    assert any(c[:2] == ["s3", "sync"] for c in node.calls("aws"))


def test_the_dataset_name_can_be_set(node):
    sync(node, AISTACK_DATASET_NAME="imagenet-1k")
    assert (node.cache / "datasets" / "imagenet-1k" / "v3" / ".aistack-complete").exists()


def test_latest_is_refused_because_it_is_not_a_pinned_version(node):
    result = sync(node, "latest", check=False)
    assert result.returncode == 2
    assert "must pin a version" in result.stderr
    assert node.calls("aws") == []


def test_a_uri_that_is_not_s3_is_refused(node):
    result = node.run(
        "dataset-sync.sh",
        check=False,
        AISTACK_DATASET_URI="https://example.com/data",
        AISTACK_DATASET_VERSION="v1",
    )
    assert result.returncode == 2
    assert "AISTACK_DATASET_URI must be s3://bucket/prefix" in result.stderr
    assert node.calls("aws") == []
