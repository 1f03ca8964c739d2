"""Image references: only a sha256 digest pins an image; tags, 'latest' and junk are refused."""

import pytest

from aistack.contracts.images import image_by_digest, is_pinned, normalize_digest, require_digest
from aistack.errors import ConfigError

DIGEST = "sha256:" + "0123456789abcdef" * 4
ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer"


@pytest.mark.parametrize(
    "reference",
    [
        f"trainer@{DIGEST}",
        f"{ECR}@{DIGEST}",
        f"localhost:5000/team/trainer@{DIGEST}",
        f"registry.example.com:8443/ml/vllm-server@{DIGEST}",
        f"nvcr.io/nvidia/pytorch:24.05-py3@{DIGEST}",
        f"{ECR}:v1.4.0@{DIGEST}",
    ],
)
def test_references_by_digest_are_accepted_with_host_port_and_optional_tag(reference):
    assert require_digest(reference, "trainer.image") == reference
    assert is_pinned(reference)


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        (f"{ECR}:latest", "mutable tag 'latest'"),
        (ECR, "neither tag nor digest"),
        ("pytorch/pytorch:2.3.1", "mutable tag '2.3.1'"),
        ("localhost:5000/trainer:2.3.1", "mutable tag '2.3.1'"),
        (f"{ECR}@sha256:abc123", "not 'sha256:' followed by 64 hex"),
        (f"{ECR}@sha512:{'a' * 128}", "not 'sha256:'"),
        (f"{ECR}@{DIGEST.upper().replace('SHA256', 'sha256')}", "uppercase"),
        (f"{ECR}@{DIGEST}0", "not 'sha256:' followed by 64 hex"),
        (f"Trainer@{DIGEST}", "not a valid image name"),
        (f" {ECR}@{DIGEST}", "whitespace"),
        ("", "no image reference"),
    ],
)
def test_unpinned_or_malformed_references_are_refused_naming_the_field(reference, says):
    with pytest.raises(ConfigError, match=says) as caught:
        require_digest(reference, "trainer.image")
    assert caught.value.fields == ["trainer.image"]
    assert "E1" in str(caught.value)
    assert "describe-images" in caught.value.problems[0].fix
    assert not is_pinned(reference)


def test_non_string_images_are_refused_not_crashed_on():
    with pytest.raises(ConfigError) as caught:
        require_digest(None, "job.image")  # type: ignore[arg-type]
    assert caught.value.fields == ["job.image"]


def test_image_by_digest_joins_url_and_digest_with_or_without_prefix():
    hex_only = DIGEST.removeprefix("sha256:")
    assert image_by_digest(ECR, DIGEST) == f"{ECR}@{DIGEST}"
    assert image_by_digest(ECR, hex_only) == f"{ECR}@{DIGEST}"
    # A digest already on the URL is replaced, never doubled.
    assert image_by_digest(f"{ECR}@sha256:{'f' * 64}", DIGEST) == f"{ECR}@{DIGEST}"


def test_image_by_digest_refuses_a_bad_digest_naming_the_field():
    with pytest.raises(ConfigError) as caught:
        image_by_digest(ECR, "latest", field="trainer.image")
    assert caught.value.fields == ["trainer.image"]


def test_normalize_digest_hints_at_uppercase_hex():
    assert normalize_digest(DIGEST.removeprefix("sha256:")) == DIGEST
    with pytest.raises(ConfigError, match="lowercase"):
        normalize_digest("A" * 64)
