"""List prices the cost model uses besides GPU machines (those live in the catalog), one
module per cloud: `aws` (us-east-1) and `gcp` (us-central1), each with its source and
as-of date. Kubernetes has no list prices of its own: a replica costs what its service
says (`replicaHourlyCostUsd`)."""
