"""Shared test setup: nothing here may touch a real cloud."""

import os

# Any AWS SDK call a test forgets to mock must fail rather than reach an account.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
