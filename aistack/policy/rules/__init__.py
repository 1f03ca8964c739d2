"""One module per checklist rule; each registers itself with `aistack.policy.rule`."""
