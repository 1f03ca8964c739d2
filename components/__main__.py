"""The aistack component package's host: Pulumi runs this directory as a provider plugin.

The schema is inferred from aistack_components/adapters.py; `make schema` writes the same
one to schema.json offline. Importing this module starts nothing (the host guard and the
`__main__` check both hold it back).
"""

from aistack_components.adapters import COMPONENTS, PACKAGE, VERSION
from pulumi.provider.experimental import component_provider_host

if __name__ == "__main__":
    component_provider_host(COMPONENTS, PACKAGE, version=VERSION)
