"""AIS-D3-05: GPU instance templates give the dataset cache local NVMe SSDs."""

from collections.abc import Iterator

from aistack import catalog
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import template_machine, training_gpu_templates


@rule(
    id="AIS-D3-05",
    checklist=["D3"],
    info="GPU instance templates attach local SSD scratch disks (NVMe), or use a machine "
    "type that comes with them.",
    why="Training reads the dataset every epoch. Synced once to local NVMe it is read at "
    "local-disk speed; read from the boot persistent disk or streamed from the bucket, "
    "the GPUs wait for I/O. Local SSDs are SCRATCH disks of 375 GB each; A2 Ultra and A3 "
    "machine types come with a fixed number (Compute Engine docs, 'About Local SSD').",
    fix="Add disks of type SCRATCH, disk_type local-ssd, interface NVME, 375 GB (the count "
    "the machine type allows), as gcp.TrainingPool does.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in training_gpu_templates(graph):
        machine = catalog.find("gcp", template_machine(template) or "")
        bundled = machine.nvme_disks if machine is not None else 0
        scratch = [
            d
            for d in template.inputs.get("disks") or []
            if d.get("type") == "SCRATCH" and d.get("interface", "NVME") == "NVME"
        ]
        if scratch:
            yield ok(template, f"{len(scratch)} local NVMe SSD(s) for the cache.")
        elif bundled:
            yield ok(template, f"the machine type comes with {bundled} local SSD(s).")
        else:
            yield fail(template, "no local SSD: the dataset cache sits on the boot disk.")
