"""Checklist rules, one per module named by the rule's id (`aws/c6_01_no_stored_keys.py`
holds AIS-C6-01), grouped by the platform whose resources they judge
(`aws/`; `gcp/` and `k8s/` beside it). Each registers itself with `aistack.policy.rule`;
a checklist ID is judged on every platform where it applies, by that platform's rules."""
