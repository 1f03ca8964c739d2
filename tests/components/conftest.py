"""The component package's modules on the path, as Pulumi's python runtime puts them when
it runs components/ (the directory first on sys.path), and one provider per session."""

import sys
from pathlib import Path

import pytest

COMPONENTS_DIR = Path(__file__).resolve().parents[2] / "components"
if str(COMPONENTS_DIR) not in sys.path:
    sys.path.insert(0, str(COMPONENTS_DIR))


@pytest.fixture(scope="session")
def provider():
    from aistack_components.adapters import COMPONENTS, PACKAGE, VERSION
    from aistack_components.codegen import sources_parsed_once
    from pulumi.provider.experimental.component import ComponentProvider

    with sources_parsed_once():  # what the provider infers, in a seventh of the time
        return ComponentProvider(COMPONENTS, PACKAGE, version=VERSION)
