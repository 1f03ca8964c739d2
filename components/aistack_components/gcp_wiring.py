"""Stand-ins for the GCP component objects a Python caller wires, built from what another
program's components exported (see wiring.py for why: component objects cannot cross
languages)."""

from typing import Any

import pulumi

from aistack.errors import Problem

__all__ = [
    "ClusterRef",
    "DatasetReadRef",
    "GcsBucketRef",
    "LogsBucketRef",
    "NotebookNetworkRef",
    "ServicesRef",
    "TrainingNetworkRef",
    "waiting_for",
]


class ServicesRef:
    """A `gcp.ProjectServices` known by its project and its `enabledServices` output.

    That Output depends on every `projects.Service` the ProjectServices registered (an Output
    carries its resources across languages), so whatever `enabling()` returns makes a resource
    wait for the APIs to be on: for all of them, where the Python API waits for the few each
    resource uses. Which APIs are enabled is not known while the component builds (the list
    is an Output, unknown in a preview), so `missing()` finds nothing to report here."""

    def __init__(self, project: str, enabled_services: pulumi.Input[list[str]]) -> None:
        self.project = project
        self._ready = pulumi.Output.from_input(enabled_services)

    def missing(self, *apis: str, where: str) -> list[Problem]:
        return []

    def require(self, *apis: str, where: str) -> None:
        return None

    def enabling(self, *apis: str) -> list[Any]:
        # An Output resolving to None in depends_on adds only the resources it carries
        # (pulumi/runtime/_depends_on.py).
        return [self._ready.apply(lambda _: None)]


class _Namespace:
    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


class LogsBucketRef:
    """The stack's logs `gcp.DatasetBucket`, known by its bucket name, in `project`."""

    def __init__(self, bucket_name: pulumi.Input[str], project: str) -> None:
        self.project = project
        self.args = _Namespace(kind="logs")
        self.bucket = _Namespace(name=pulumi.Output.from_input(bucket_name))


def waiting_for(value: pulumi.Input[Any]) -> Any:
    """What stands in for a resource in `depends_on`, given one of its outputs (a GKE
    cluster's id): an Output resolving to None adds only the resources it carries."""
    return pulumi.Output.from_input(value).apply(lambda _: None)


class ClusterRef:
    """A `gcp.GkeCluster` known by its project, region, id and node service account: what a
    `gcp.GpuNodePool` reads from its cluster."""

    def __init__(
        self,
        project: str,
        region: str,
        cluster_id: pulumi.Input[str],
        node_service_account_email: pulumi.Input[str],
        node_disk_key: pulumi.Input[str] | None = None,
    ) -> None:
        self.project = project
        self.region = region
        self.cluster_id = pulumi.Output.from_input(cluster_id)
        self.node_service_account_email = pulumi.Output.from_input(node_service_account_email)
        self.node_disk_key = (
            pulumi.Output.from_input(node_disk_key) if node_disk_key is not None else None
        )

    def enabling(self) -> list[Any]:
        return [
            waiting_for(self.cluster_id),
            waiting_for(self.node_service_account_email),
            *([waiting_for(self.node_disk_key)] if self.node_disk_key is not None else []),
        ]


class NotebookNetworkRef:
    """A `gcp.Network` with a notebook tier, known by its project, region, self-links and
    the notebook tier's service account: what a `gcp.Notebook` reads from its network. Its
    notebook zones are the region's zones the catalog knows, as the network plans them for
    a notebook tier without machine types (the notebook then keeps those offering its
    machine)."""

    def __init__(
        self,
        project: str,
        region: str,
        network_self_link: pulumi.Input[str],
        subnet_self_link: pulumi.Input[str],
        service_account_email: pulumi.Input[str],
    ) -> None:
        self.project = project
        self.region = region
        self.network_self_link = pulumi.Output.from_input(network_self_link)
        self._subnet = pulumi.Output.from_input(subnet_self_link)
        self._account = pulumi.Output.from_input(service_account_email)
        self.subnetworks = {"notebook": self._subnet}

    def zones(self, tier: str) -> list[str]:
        from aistack import catalog

        return list(catalog.region_zones("gcp", self.region))

    def subnet_self_link(self, tier: str) -> pulumi.Output[str]:
        return self._subnet

    def service_account(self, tier: str) -> pulumi.Output[str]:
        return self._account


class DatasetReadRef:
    """The team's dataset `gcp.DatasetBucket`, known by its bucket name and region. The read
    grant a `gcp.Notebook` asks of it is made here, at the top of the stack, named for the
    notebook (in Python it sits under the bucket's component, which this program does not
    hold), and waits for the project's APIs."""

    def __init__(self, bucket_name: pulumi.Input[str], region: str, services: ServicesRef) -> None:
        self.region = region
        self.args = _Namespace(kind="dataset")
        self._bucket = pulumi.Output.from_input(bucket_name)
        self._services = services

    def grant_read(self, member: pulumi.Input[str], *, name: str) -> list[Any]:
        import pulumi_gcp as gcp

        from aistack.gcp.dataset_bucket import READ_ROLE

        return [
            gcp.storage.BucketIAMMember(
                f"{name}-dataset-read",
                bucket=self._bucket,
                role=READ_ROLE,
                member=member,
                opts=pulumi.ResourceOptions(depends_on=self._services.enabling()),
            )
        ]


class TrainingNetworkRef:
    """A `gcp.Network`'s training tier known by its subnet, service account, planned zones
    and health-check port: what a `gcp.TrainingPool` reads from its network."""

    def __init__(
        self,
        region: str,
        subnet_self_link: pulumi.Input[str],
        service_account_email: pulumi.Input[str],
        zones: list[str],
        health_check_port: int | None,
    ) -> None:
        self.region = region
        self.subnetworks = {"training": subnet_self_link}
        self._subnet = pulumi.Output.from_input(subnet_self_link)
        self._account = pulumi.Output.from_input(service_account_email)
        self._zones = list(zones)
        self.args = _Namespace(training_health_check_port=health_check_port)

    def subnet_self_link(self, tier: str) -> pulumi.Output[str]:
        return self._subnet

    def service_account(self, tier: str) -> pulumi.Output[str]:
        return self._account

    def zones(self, tier: str) -> list[str]:
        return list(self._zones)


class InferenceNetworkRef:
    """A `gcp.Network`'s inference tier known by its network, subnet, service account,
    planned zones, gateway port and proxy-only subnet range: what a `gcp.InferenceTier`
    reads from its network."""

    def __init__(
        self,
        region: str,
        network_id: pulumi.Input[str],
        subnet_self_link: pulumi.Input[str],
        service_account_email: pulumi.Input[str],
        zones: list[str],
        gateway_port: int,
        proxy_subnet_cidr: str | None,
    ) -> None:
        self.region = region
        self.network_id = pulumi.Output.from_input(network_id)
        self.subnetworks = {"inference": subnet_self_link}
        self._subnet = pulumi.Output.from_input(subnet_self_link)
        self._account = pulumi.Output.from_input(service_account_email)
        self._zones = list(zones)
        # Present or not: the tier refuses a network without one.
        self.proxy_subnet = proxy_subnet_cidr
        self.args = _Namespace(
            gateway_port=gateway_port, subnet_cidr=lambda tier: str(proxy_subnet_cidr)
        )

    def subnet_self_link(self, tier: str) -> pulumi.Output[str]:
        return self._subnet

    def service_account(self, tier: str) -> pulumi.Output[str]:
        return self._account

    def zones(self, tier: str) -> list[str]:
        return list(self._zones)


class GcsBucketRef:
    """A `gcp.DatasetBucket` known by its name, kind, region (and a dataset's version): it
    makes the read and write grants the component would, with the same conditions."""

    def __init__(
        self,
        label: str,
        *,
        kind: str,
        region: str,
        bucket_name: pulumi.Input[str],
        services: Any,
        dataset_version: str | None = None,
    ) -> None:
        from aistack.gcp.dataset_bucket import DatasetBucket

        self._name = label
        self.region = region
        self._services = services
        self.owner: Any = None
        dataset = _Namespace(version=dataset_version) if dataset_version else None
        self.args = _Namespace(kind=kind, dataset=dataset)
        self.bucket = _Namespace(name=pulumi.Output.from_input(bucket_name))
        self.bucket_name = self.bucket.name
        self._impl = DatasetBucket

    def grant_read(self, member: pulumi.Input[str], *, prefix: str = "", name: str) -> Any:
        return self._impl.grant_read(self, member, prefix=prefix, name=name)  # type: ignore[arg-type]

    def grant_write(self, member: pulumi.Input[str], *, prefix: str = "", name: str) -> Any:
        return self._impl.grant_write(self, member, prefix=prefix, name=name)  # type: ignore[arg-type]

    def _grant(self, *args: Any) -> Any:
        return self._impl._grant(self, *args)  # type: ignore[arg-type]

    def _grant_owner(self) -> Any:
        # The grants are children of the component that owns this stand-in (_owning).
        return self.owner
