"""Where `tools/e2e/build.sh` put each part it built (build/e2e/parts.env in the clone)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Parts:
    pulumi: Path
    pulumi_kubernetes: Path
    pulumi_yaml: Path
    etcd: Path
    kubernetes: Path
    kwok: Path
    kueue: Path
    jobset: Path
    gateway_api: Path
    prometheus_engine: Path
    gke_gateway_api: Path

    @classmethod
    def built(cls) -> Parts:
        env = Path(__file__).resolve().parents[1] / "build" / "e2e" / "parts.env"
        if not env.exists():
            raise RuntimeError(f"{env} is missing: run tools/e2e/build.sh (make e2e does)")
        paths = dict(line.split("=", 1) for line in env.read_text().splitlines() if "=" in line)
        parts = cls(**{name.lower(): Path(path) for name, path in paths.items()})
        unbuilt = [str(path) for path in vars(parts).values() if not (path / ".built").exists()]
        if unbuilt:
            raise RuntimeError(f"not built: {', '.join(unbuilt)}: run tools/e2e/build.sh")
        return parts

    @property
    def path(self) -> str:
        """PATH with the Pulumi CLI, the YAML language host and the Kubernetes provider
        first: the engine takes a plugin found on PATH (an ambient plugin), which is how it
        finds ours."""
        bins = [
            self.pulumi / "bin",
            self.pulumi_yaml / "bin",
            self.pulumi_kubernetes / "bin",
            self.kubernetes / "bin",
        ]
        return os.pathsep.join([*map(str, bins), os.environ.get("PATH", "")])
