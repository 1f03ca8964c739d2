"""Code that runs on Google Cloud, not in the Pulumi program: shipped as package data and
uploaded as a function's source. Each directory is deployed alone."""
