"""Rules that judge Google Cloud resources, one per module, named for the checklist item."""
