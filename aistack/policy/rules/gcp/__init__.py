"""Rules that judge Google Cloud resources, one per module, named by the rule's id and topic
(`c4_02_gcp_residency.py` holds AIS-C4-02)."""
