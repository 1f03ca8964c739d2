"""Rules that judge AWS resources, one per module, named by the rule's id and topic
(`c6_01_no_stored_keys.py` holds AIS-C6-01)."""
