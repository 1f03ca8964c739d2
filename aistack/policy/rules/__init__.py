"""Checklist rules, one per module, grouped by the platform whose resources they judge
(`aws/`; `gcp/` and `k8s/` beside it). Each registers itself with `aistack.policy.rule`;
a checklist ID is judged on every platform where it applies, by that platform's rules."""
