"""Cost estimators for Google Cloud resources, one module per subject; list prices in
`aistack.cost.prices.gcp`."""
