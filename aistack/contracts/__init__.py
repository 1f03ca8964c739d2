"""The floor every other layer builds on: the vocabulary components write and queries,
rules, cost and scan read. No cloud SDK: only pulumi's core, through aistack.config.

- `images`: container images by digest (E1).
- `model_versions`: explicit model versions, never a moving label (S7).
- `capacity`: `CapacityNeed`, one GPU capacity need on every cloud (C1).
- `quota_needs`: gathering pools' GPU quota needs into requests (C1).
- `k8s`: Kubernetes label keys and rules, supported versions, Kueue, serving limits,
  quantities.
- `gcp`: what Google Cloud resources carry where labels cannot go; what the budget
  guard's code calls.
- `aws`: the tags AWS components write; the AWS wiring Protocols.
- `components`: the neutral wiring Protocols.
- `serving`: one check of a serving version list, on every platform.

A constant a component writes and a rule reads is defined here once; neither side copies it.
"""
