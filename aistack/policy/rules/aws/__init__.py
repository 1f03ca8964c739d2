"""Rules that judge AWS resources, one per module, named for the checklist item they check."""
