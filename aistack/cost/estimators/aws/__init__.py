"""Cost estimators for AWS resources, one module per subject; list prices in
`aistack.cost.prices.aws`."""
