"""Rules that judge Kubernetes objects, one per module, named for the checklist item."""
