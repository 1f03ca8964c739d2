"""Deprecated: moved to `aistack.contracts.images`; this alias goes in the next minor release."""

import warnings

from aistack.contracts.images import *  # noqa: F403 - the alias re-exports its new home
from aistack.contracts.images import __all__  # noqa: F401

warnings.warn(
    "aistack.images moved to aistack.contracts.images; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
