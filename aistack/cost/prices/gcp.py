"""Google Cloud list prices the cost model uses besides GPU machines (those are in the
catalog, `aistack/catalog/data/gcp.json`).

Regional list prices for us-central1 (Iowa), as published on each service's pricing page;
planning numbers, not a quote. europe-west4 and the other large regions list the same or
within a few per cent for these services.
"""

PRICES_AS_OF = "2026-09"
SOURCE = (
    "cloud.google.com/storage/pricing (storage per GiB-hour x 730), "
    "cloud.google.com/kms/pricing, cloud.google.com/artifact-registry/pricing"
)

#: Cloud Storage, regional bucket, per GB-month: $0.000027397, $0.000013699, $0.000005479
#: and $0.000001644 per GiB-hour for Standard, Nearline, Coldline and Archive.
GCS_GB_MONTH = {
    "STANDARD": 0.020,
    "NEARLINE": 0.010,
    "COLDLINE": 0.004,
    "ARCHIVE": 0.0012,
}
#: Cloud KMS: each active (enabled) SOFTWARE key version, per month. Rotation adds a
#: version and keeps the old ones enabled, so objects written under them stay readable.
KMS_KEY_VERSION_MONTH = 0.06
#: Artifact Registry storage per GB-month (the first 0.5 GB a month is free).
ARTIFACT_REGISTRY_GB_MONTH = 0.10
#: GCS keeps soft-deleted objects 7 days unless the bucket says otherwise (Cloud Storage
#: docs, "Soft delete": the default policy of new buckets), billed as live bytes.
GCS_DEFAULT_SOFT_DELETE_DAYS = 7

#: Cloud NAT (cloud.google.com/nat/pricing, Public NAT): per VM instance using the gateway,
#: per hour, up to 32 VMs; from 33 VMs the gateway-hour is capped at $0.044.
NAT_VM_HOUR = 0.0014
NAT_GATEWAY_HOUR_CAP = 0.044
NAT_VM_CAP = 32
#: Per GiB processed by the gateway, inbound and outbound, the same in every region.
NAT_PER_GIB = 0.045
#: Each static or ephemeral external IP address the gateway uses, per hour.
NAT_IP_HOUR = 0.005

#: Compute Engine on-demand list prices, us-central1, per hour, for the CPU machine types a
#: notebook typically runs on (Compute Engine pricing, "General-purpose machine types": E2
#: $0.021811 per vCPU-hour and $0.002923 per GB-hour; N2 $0.031611 and $0.004237; N1
#: predefined n1-standard-4 $0.189999). GPU machine types are priced by the catalog.
CPU_MACHINE_HOUR = {
    "e2-standard-2": 0.067006,
    "e2-standard-4": 0.134012,
    "e2-standard-8": 0.268024,
    "e2-highmem-4": 0.180800,
    "n2-standard-4": 0.194236,
    "n2-standard-8": 0.388472,
    "n1-standard-4": 0.189999,
}
#: Balanced persistent disk, per GB-month (Compute Engine disk pricing, us-central1): billed
#: while the disk exists, the VM running or stopped.
PD_BALANCED_GB_MONTH = 0.100
