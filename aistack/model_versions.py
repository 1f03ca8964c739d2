"""Deprecated: moved to `aistack.contracts.model_versions`; the alias goes next minor release."""

import warnings

from aistack.contracts.model_versions import *  # noqa: F403 - the alias re-exports its new home
from aistack.contracts.model_versions import __all__  # noqa: F401

warnings.warn(
    "aistack.model_versions moved to aistack.contracts.model_versions; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
