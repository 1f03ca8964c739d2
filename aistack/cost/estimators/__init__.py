"""Cost estimators, one module per component family; each registers with `@estimator`."""
