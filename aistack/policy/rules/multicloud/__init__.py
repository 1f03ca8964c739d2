"""Rules whose one invariant holds on both clouds, judged on each cloud's resources through
the per-cloud queries (`t1_05_checkpoint_flush_within_notice.py` holds AIS-T1-05): the
same promise, with one id, wherever it applies."""
