"""Cost estimators, one package per platform (`aws`, `gcp`, `k8s`) and one module per
subject inside; each registers with `@estimator`. What the platforms share, the workload
assumptions and the naive baseline's serving model, is `aistack.cost.baseline`."""
