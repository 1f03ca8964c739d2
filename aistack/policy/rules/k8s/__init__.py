"""Rules that judge Kubernetes objects, one per module, named by the rule's id and topic
(`t2_02_k8s_job_retries.py` holds AIS-T2-02)."""
