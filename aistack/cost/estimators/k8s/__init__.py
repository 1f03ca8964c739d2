"""Cost estimators for Kubernetes objects: the replicas a serving Deployment runs, at the
hourly cost its service states (Kubernetes objects have no list price of their own)."""
