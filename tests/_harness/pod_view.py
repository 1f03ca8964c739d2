"""A container's filesystem as its pod will see it, built without a container engine.

`bwrap` (Debian's bubblewrap) gives a process its own mount, user, PID and network
namespaces. `PodView` uses them to lay out what the kubelet would: an empty root, read-only
when the container's `readOnlyRootFilesystem` is set; every volume mount at its mount path
(an emptyDir empty and writable by anyone, as the kubelet makes it, mode 0777; a ConfigMap's
keys as read-only files); the pod's UID and GID; a network of its own with only loopback,
so a server in it can listen on any port and no one outside reaches it. The programs come
from the host's `/usr` (read-only): Debian's nginx stands in for the image's, run with the
container's own command.

Two things the kubelet's view has that this one makes up: `/etc` holds only what name
lookups need (`passwd` and `group` naming the pod's user, and `hosts` answering the
cluster DNS names given, each on its own loopback address, as cluster DNS would answer a
Service), and the harness's own driver script is bound read-only at `DRIVER_DIR`.

Everything runs under `timeout_s`; `--die-with-parent` and the PID namespace end every
process of the view when the call ends, whatever happens.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Where the harness's driver script appears inside the view (read-only).
DRIVER_DIR = "/aistack-harness"
BWRAP_MISSING = (
    "the pod-view tests need bubblewrap: install it (Debian/Ubuntu: apt-get install "
    "bubblewrap), or run `make test`, which installs it"
)


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


@dataclass
class PodView:
    """One container of a rendered pod spec, ready to run a command in its view.

    `config_maps` maps a ConfigMap's name to its `data`, as the graph records them;
    `cluster_names` are DNS names the pod resolves (Services), each given a loopback
    address of its own (127.0.1.1, 127.0.1.2, ...).
    """

    pod_spec: dict[str, Any]
    container_name: str
    config_maps: dict[str, dict[str, str]]
    staging: Path
    cluster_names: list[str] = field(default_factory=list)

    @property
    def container(self) -> dict[str, Any]:
        everyone = [
            *(self.pod_spec.get("initContainers") or []),
            *(self.pod_spec.get("containers") or []),
        ]
        for container in everyone:
            if container["name"] == self.container_name:
                return container
        raise KeyError(f"no container {self.container_name!r} in the pod")

    def ids(self) -> tuple[int, int]:
        """The UID and GID the container runs as: its own securityContext, else the pod's."""
        pod = self.pod_spec.get("securityContext") or {}
        own = self.container.get("securityContext") or {}
        uid = own.get("runAsUser", pod.get("runAsUser", 0))
        gid = own.get("runAsGroup", pod.get("runAsGroup", 0))
        return int(uid), int(gid)

    def read_only_root(self) -> bool:
        return bool((self.container.get("securityContext") or {}).get("readOnlyRootFilesystem"))

    def host_addresses(self) -> dict[str, str]:
        return {name: f"127.0.1.{i}" for i, name in enumerate(self.cluster_names, start=1)}

    def _etc(self) -> Path:
        uid, gid = self.ids()
        etc = self.staging / "etc"
        etc.mkdir(parents=True, exist_ok=True)
        (etc / "passwd").write_text(
            f"root:x:0:0:root:/root:/bin/sh\npod:x:{uid}:{gid}:pod:/nonexistent:/bin/sh\n"
        )
        (etc / "group").write_text(f"root:x:0:\npod:x:{gid}:\n")
        hosts = ["127.0.0.1 localhost"]
        hosts += [f"{address} {name}" for name, address in self.host_addresses().items()]
        (etc / "hosts").write_text("\n".join(hosts) + "\n")
        (etc / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files\n")
        for mount in self.container.get("volumeMounts") or []:
            # A mount under /etc needs its mount point in the (read-only) /etc.
            if mount["mountPath"].startswith("/etc/"):
                (etc / mount["mountPath"].removeprefix("/etc/")).mkdir(parents=True, exist_ok=True)
        return etc

    def _volume_args(self) -> list[str]:
        volumes = {volume["name"]: volume for volume in self.pod_spec.get("volumes") or []}
        args: list[str] = []
        for mount in self.container.get("volumeMounts") or []:
            volume = volumes[mount["name"]]
            path = mount["mountPath"]
            if "emptyDir" in volume:
                args += ["--perms", "0777", "--tmpfs", path]
                if mount.get("readOnly"):
                    args += ["--remount-ro", path]
            elif "configMap" in volume:
                source = self.staging / "volumes" / mount["name"]
                source.mkdir(parents=True, exist_ok=True)
                data = self.config_maps[volume["configMap"]["name"]]
                items = volume["configMap"].get("items") or [{"key": k, "path": k} for k in data]
                for item in items:
                    target = source / item["path"]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(data[item["key"]])
                args += ["--ro-bind", str(source), path]
            else:
                raise NotImplementedError(f"volume {mount['name']!r}: {sorted(volume)}")
        return args

    def command(
        self,
        argv: list[str],
        driver: Path | None = None,
        *,
        programs: tuple[Path, ...] = (),
        env: dict[str, str] | None = None,
        share_net: bool = False,
    ) -> list[str]:
        """The bwrap command line that runs `argv` in the container's view. `programs`:
        host directories bound read-only at their own paths and put first on PATH (a
        stand-in for the image's own programs, e.g. a virtual environment's `aws`); `env`:
        variables beside the container's own (a stand-in endpoint, say); `share_net`: the
        host's network, to reach a stand-in server on the host's loopback."""
        bwrap = find_bwrap()
        if bwrap is None:
            raise RuntimeError(BWRAP_MISSING)
        uid, gid = self.ids()
        args = [bwrap, "--die-with-parent", "--unshare-all", "--new-session"]
        if share_net:
            args.append("--share-net")
        args += ["--uid", str(uid), "--gid", str(gid), "--tmpfs", "/"]
        args += ["--ro-bind", "/usr", "/usr"]
        for link in ("bin", "sbin", "lib", "lib64"):
            if Path(f"/{link}").is_symlink():
                args += ["--symlink", f"usr/{link}", f"/{link}"]
        args += ["--ro-bind", str(self._etc()), "/etc", "--dev", "/dev", "--proc", "/proc"]
        if driver is not None:
            args += ["--ro-bind", str(driver.parent), DRIVER_DIR]
        for program in programs:
            args += ["--ro-bind", str(program), str(program)]
        args += self._volume_args()
        if self.read_only_root():
            args += ["--remount-ro", "/"]
        path = ":".join([*(str(p / "bin") for p in programs), "/usr/sbin:/usr/bin:/sbin:/bin"])
        args += ["--clearenv", "--setenv", "PATH", path]
        for variable in self.container.get("env") or []:
            if "value" in variable:
                args += ["--setenv", variable["name"], str(variable["value"])]
        for name, value in (env or {}).items():
            args += ["--setenv", name, value]
        return [*args, "--", *argv]

    def run(
        self, argv: list[str], timeout_s: float = 30, **view: Any
    ) -> subprocess.CompletedProcess[str]:
        """`argv` in the view (`view`: `command`'s keywords), its output captured."""
        return subprocess.run(
            self.command(argv, **view),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )

    def drive(self, script: str, payload: dict[str, Any], timeout_s: float = 30) -> dict[str, Any]:
        """A Python `script` (Debian's python3) run in the view with `payload` as its first
        argument (JSON); it prints one JSON object, which is returned."""
        driver = self.staging / "driver" / "driver.py"
        driver.parent.mkdir(parents=True, exist_ok=True)
        driver.write_text(script)
        argv = ["/usr/bin/python3", f"{DRIVER_DIR}/driver.py", json.dumps(payload)]
        done = subprocess.run(
            self.command(argv, driver),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            raise AssertionError(f"the driver failed ({done.returncode}): {done.stderr[-2000:]}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
