"""The aistack component package's host: Pulumi runs this directory as a provider plugin.

The schema is inferred from aistack_components/adapters.py; `make schema` writes the same
one to schema.json offline. Importing this module starts nothing (the `__main__` check
holds it back).

What `component_provider_host(COMPONENTS, PACKAGE, version=VERSION)` does, with the
schema inferred inside `sources_parsed_once`: Pulumi's analyzer reads each input type's
docstrings through `inspect.getsource`, which parses args.py whole for each of its 150
types, about 4.5 s at every `pulumi preview` or `up` of a program in another language;
parsed once, and each class found by one walk of the tree, it takes 0.1-0.4 s
(codegen.sources_parsed_once says why that is the same schema). The parse cache and the
class index end with the inference, before the server starts.
"""

import sys

from aistack_components.adapters import COMPONENTS, PACKAGE, VERSION
from aistack_components.codegen import sources_parsed_once
from pulumi.provider import main
from pulumi.provider.experimental.component import ComponentProvider

if __name__ == "__main__":
    with sources_parsed_once():
        provider = ComponentProvider(COMPONENTS, PACKAGE, version=VERSION)
    main(provider, sys.argv[1:])
