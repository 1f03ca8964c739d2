"""Deprecated: `aws.InferenceTier` lives in the package `aistack.aws.inference` (import it
from `aistack.aws`); this alias of its old module path goes in the next minor release."""

import warnings

from aistack.aws.inference import *  # noqa: F403 - the alias re-exports its new home
from aistack.aws.inference import __all__  # noqa: F401

warnings.warn(
    "aistack.aws.inference_tier moved to aistack.aws.inference; import from there",
    DeprecationWarning,
    stacklevel=2,
)
