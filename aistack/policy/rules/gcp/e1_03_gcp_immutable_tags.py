"""AIS-E1-03: Artifact Registry Docker repositories keep tags immutable."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import docker_repositories


@rule(
    id="AIS-E1-03",
    checklist=["E1"],
    info="Artifact Registry Docker repositories have immutable tags.",
    why="A pinned framework/CUDA image is only reproducible if 'v1.4' cannot be pushed "
    "again: with mutable tags (the default) a push silently moves the tag to another build.",
    fix="Use gcp.ContainerRegistry, or set dockerConfig.immutableTags: true on the "
    "repository; reference images by digest (ContainerRegistry.image_ref).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for repository in docker_repositories(graph):
        if repository.get("dockerConfig", "immutableTags") is True:
            yield ok(repository, "tags are immutable.")
        else:
            yield fail(
                repository, "tags are mutable (the default): a tag can move to another build."
            )
