"""The floor every other layer builds on: the vocabulary components write and queries,
rules, cost and scan read, with no cloud SDK and no pulumi.

- `images`: container images by digest (E1).
- `model_versions`: explicit model versions, never a moving label (S7).
- `quota_needs`: gathering pools' GPU quota needs (C1).
- `k8s`: Kubernetes label keys and rules, supported versions, Kueue, serving limits,
  quantities.
- `gcp`: what Google Cloud resources carry where labels cannot go.

A constant a component writes and a rule reads is defined here once; neither side copies it.
"""
