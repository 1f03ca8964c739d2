"""What every GPU node aistack launches shares: the catalog check and the launch template.

One place decides the node's security posture: IMDSv2 required, an encrypted gp3 root,
no public IP, the workload's instance profile, tags on the instance and its volumes, and
how far the metadata service reaches (one hop on AWS Batch hosts and serving nodes, two on
standing training nodes, whose containers use the instance role). One hop stops
bridge-networked containers only: AWS Batch runs its ECS jobs in host networking, so Batch
jobs reach the metadata service and the instance role whatever the hop limit.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from aistack import catalog
from aistack.aws._base import child_opts
from aistack.errors import ConfigError, Problems

__all__ = ["gpu_launch_template", "offer_in_region", "offers_in_region"]


def offer_in_region(
    type_name: str, region: str, field: str, problems: Problems
) -> catalog.InstanceType | None:
    """The catalog entry for `type_name` if `region` offers it; else a problem (C2)."""
    try:
        offer = catalog.get(type_name, "aws")
    except ConfigError as error:
        for problem in error.problems:
            problems.add(field, problem.message, problem.fix)
        return None
    if not offer.offered_in(region):
        problems.add(
            field,
            f"{offer.name} is not offered in {region} (checklist C2).",
            f"use a region that offers it, {list(offer.regions)}, or another type; "
            f"`aistack catalog regions --gpu {offer.gpu_model}` ranks the regions.",
        )
        return None
    return offer


def offers_in_region(
    type_names: tuple[str, ...], region: str, where: str, problems: Problems
) -> list[catalog.InstanceType]:
    """The catalog entries of `type_names` that `region` offers; a problem at
    `<where>.instanceTypes[i]` for each other one (C2)."""
    found = []
    for index, type_name in enumerate(type_names):
        field = f"{where}.instanceTypes[{index}]".lstrip(".")
        offer = offer_in_region(type_name, region, field, problems)
        if offer is not None:
            found.append(offer)
    return found


def gpu_launch_template(
    resource_name: str,
    *,
    parent: pulumi.Resource,
    description: str,
    region: str,
    image_id: pulumi.Input[str],
    instance_profile_arn: pulumi.Input[str],
    root_device_name: str,
    root_volume_gb: int,
    user_data: pulumi.Input[str],
    instance_tags: dict[str, str],
    template_tags: dict[str, str] | None = None,
    security_group_id: pulumi.Input[str] | None = None,
    instance_type: str | None = None,
    batch_host: bool = False,
    container_metadata_access: bool = False,
) -> aws.ec2.LaunchTemplate:
    """A launch template for GPU nodes in private subnets.

    With `security_group_id` the template carries the network interface (no public IP,
    that group); without it the caller sets subnets and groups itself, as AWS Batch
    does, where an interface in the template would conflict with the compute environment.

    `batch_host`: the template is for an AWS Batch compute environment, which owns the
    instance's life, so no shutdown behaviour is set; otherwise (auto scaling nodes) a
    shutdown from inside the instance terminates it.

    `container_metadata_access`: the metadata response hop limit is 2, so processes in
    bridge-networked containers reach the metadata service and the instance role. Only for
    nodes whose containers need the role (a standing training pool's trainer writes its
    checkpoints with it). Otherwise 1: serving containers (bridge network) need no AWS
    credentials, the host's scripts pull the image and sync the model. On Batch hosts 1 is
    kept for any bridge-networked container, but it is no isolation for Batch jobs: they
    run in the host's network namespace (Batch user guide, "Networking modes for AWS Batch
    jobs"), where there is no extra hop, so the instance role must hold nothing a job may
    not have (aws.TrainingPool).
    """
    network_interfaces: Any = None
    if security_group_id is not None:
        network_interfaces = [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                device_index=0,
                associate_public_ip_address="false",
                delete_on_termination="true",
                security_groups=[security_group_id],
            )
        ]
    return aws.ec2.LaunchTemplate(
        resource_name,
        description=description,
        image_id=image_id,
        instance_type=instance_type,
        iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=instance_profile_arn),
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled",
            http_tokens="required",
            http_put_response_hop_limit=2 if container_metadata_access else 1,
            instance_metadata_tags="disabled",
        ),
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=root_device_name,
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=root_volume_gb,
                    volume_type="gp3",
                    encrypted="true",
                    delete_on_termination="true",
                ),
            )
        ],
        network_interfaces=network_interfaces,
        # EC2 stops an EBS-backed instance that shuts itself down unless told otherwise
        # (EC2 User Guide, "Change the instance initiated shutdown behavior": the default
        # is stop). A stopped node keeps its EBS billing and its group replaces it as
        # unhealthy, so a node's last-resort `shutdown -h now` (lib.sh terminate_node)
        # must terminate it. Batch-managed instances are Batch's to end.
        instance_initiated_shutdown_behavior=None if batch_host else "terminate",
        user_data=user_data,
        tag_specifications=[
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=instance_tags)
            for kind in ("instance", "volume", "network-interface")
        ],
        update_default_version=True,
        region=region,
        tags=template_tags if template_tags is not None else instance_tags,
        opts=child_opts(parent),
    )
