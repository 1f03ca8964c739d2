"""Where `tools/e2e/build.sh` put each part it built (its parts.env, in the build cache)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def cache_dir() -> Path:
    return Path(os.environ.get("AISTACK_E2E_CACHE", Path.home() / ".cache" / "aistack-e2e"))


@dataclass(frozen=True)
class Parts:
    pulumi: Path
    pulumi_kubernetes: Path
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
        env = cache_dir() / "parts.env"
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
        """PATH with the Pulumi CLI and the Kubernetes provider first: the engine takes a
        provider plugin found on PATH (an ambient plugin), which is how it finds ours."""
        bins = [self.pulumi / "bin", self.pulumi_kubernetes / "bin", self.kubernetes / "bin"]
        return os.pathsep.join([*map(str, bins), os.environ.get("PATH", "")])
