"""The boot image of GCP GPU VMs: pinned by name, and a Deep Learning VM image only with the
NVIDIA driver built in (aistack.gcp._boot_image cites the naming and why: the VMs boot with
Secure Boot on and no internet path, so no driver can be built or fetched at boot)."""

from __future__ import annotations

import pytest

from aistack.errors import ConfigError
from aistack.gcp._boot_image import pinned_boot_image

from . import test_inference_tier, test_training_pool

DLVM = "projects/deeplearning-platform-release/global/images/"


@pytest.mark.parametrize(
    "name",
    [
        # The DLVM docs' example (docs.cloud.google.com/deep-learning-vm/docs/images).
        "pytorch-2-9-cu129-ubuntu-2204-nvidia-580-v20260416",
        # Booted by public configs (image id 3612508179781164991).
        "common-cu129-ubuntu-2204-nvidia-580-v20260909",
        "pytorch-2-7-cu128-ubuntu-2204-nvidia-570-v20250701",
    ],
)
def test_dlvm_images_with_the_driver_built_in_are_taken(name):
    assert pinned_boot_image(DLVM + name) == DLVM + name


@pytest.mark.parametrize(
    "name",
    [
        "common-cu124-v20250101",  # what the stacks named: no OS, no driver, not a DLVM name
        "common-cu124-debian-11-py310-v20250101",  # driver installed at first boot
        "common-cu124-ubuntu-2204-py310-v20250101",
        "common-cu129-ubuntu-2204-nvidia-580",  # a family's name, not an image's
    ],
)
def test_dlvm_images_that_would_build_the_driver_at_boot_are_refused(name):
    with pytest.raises(ValueError, match="not a Deep Learning VM image with the NVIDIA driver"):
        pinned_boot_image(DLVM + name)


def test_a_family_is_refused_with_the_command_that_finds_its_current_image():
    with pytest.raises(ValueError) as error:
        pinned_boot_image(DLVM + "family/common-cu129-ubuntu-2204-nvidia-580")
    assert "gcloud compute images describe-from-family" in str(error.value)
    assert "(E1)" in str(error.value)


def test_a_team_image_of_another_project_is_taken_as_named():
    image = "projects/team-ml-prod/global/images/trainer-base-2026-09"
    assert pinned_boot_image(image) == image


def test_both_components_refuse_a_dlvm_image_without_the_driver(run, governance):
    bad = DLVM + "common-cu124-v20250101"
    with pytest.raises(ConfigError) as error:
        run(test_training_pool.stack(governance, sourceImage=bad))
    assert "train.sourceImage" in str(error.value)
    assert "describe-from-family" in str(error.value)
    with pytest.raises(ConfigError) as error:
        run(test_inference_tier.stack(governance, sourceImage=bad))
    assert "sourceImage" in str(error.value)


def test_the_training_template_turns_guest_attributes_on(run, governance):
    """The boot's marker (node_report in lib.sh) is a guest attribute; the metadata server
    takes it only with enable-guest-attributes=TRUE (compute/docs/metadata/
    manage-guest-attributes)."""
    graph = run(test_training_pool.stack(governance))
    metadata = graph.named("train-template").inputs["metadata"]
    assert metadata["enable-guest-attributes"] == "TRUE"
