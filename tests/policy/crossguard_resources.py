"""What CrossGuard hands a policy pack, built from a recorded graph (shared by the pack tests)."""

from pulumi_policy import PolicyResource, PolicyResourceOptions


def policy_resources(graph) -> list[PolicyResource]:
    """The stack's resources as pulumi-policy's PolicyResources, parents linked."""
    options = PolicyResourceOptions(
        protect=False,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        additional_secret_outputs=[],
        custom_timeouts=None,
    )
    built = {
        r.urn: PolicyResource(
            resource_type=r.type,
            props={**r.outputs, **r.inputs},
            urn=r.urn,
            name=r.name,
            opts=options,
            provider=None,
            parent=None,
            dependencies=[],
            property_dependencies={},
        )
        for r in graph.resources
    }
    for r in graph.resources:
        built[r.urn].parent = built.get(r.parent or "")
    return list(built.values())
