"""A sandboxed node for running the bootstrap scripts under pytest.

PATH holds only stubs and links to harmless tools (coreutils, sed, grep, tar, ...), so a
command a test did not stub is "not found" rather than the host's real `mount`, `mdadm` or
`shutdown`. Each stub appends its argv to the test's call log, prints `$STUB_DIR/<name>.out`
and exits with `$STUB_DIR/<name>.rc` when those exist (or with its default status), and acts
as a missing command when `$STUB_DIR/<name>.missing` exists. The stubs and links are made
once per session; everything a test changes lives in its own tmp_path.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import aistack.node

SCRIPTS_DIR = Path(aistack.node.__file__).parent / "scripts"
BASH = shutil.which("bash") or "/bin/bash"

# Harmless tools the scripts and the stubs may use from the host.
SAFE_TOOLS = (
    "bash", "cat", "date", "dirname", "basename", "mkdir", "rm", "mv", "cp", "ln", "touch",
    "sleep", "sed", "grep", "tr", "cut", "sort", "head", "tail", "wc", "env", "readlink",
    "chmod", "base64", "tar", "gzip", "setsid", "ls", "true", "false",
)  # fmt: skip

# Answers of the metadata service stub: IMDSv2 only, like a node with http-tokens=required.
CURL_STUB = r"""
method=GET url="" token="" flavor=""
while (($#)); do
  case $1 in
    -X) method=$2; shift ;;
    -H)
      [[ $2 == "X-aws-ec2-metadata-token: "* ]] && token=${2#*: }
      [[ $2 == "Metadata-Flavor: "* ]] && flavor=${2#*: }
      shift ;;
    -w | --max-time | -o) shift ;;
    -*) ;;
    *) url=$1 ;;
  esac
  shift
done
if [[ -e $STUB_DIR/imds-down ]]; then exit 7; fi
if [[ $url == */computeMetadata/v1/* ]]; then gce; fi
if [[ $method == PUT ]]; then printf 'TOKEN-1'; exit 0; fi
if [[ $token != TOKEN-1 ]]; then printf 'Unauthorized\n401'; exit 0; fi
path=${url#*/latest/}
file=$STUB_DIR/imds/$path
if [[ -f $file ]]; then cat "$file"; printf '\n200'
elif [[ $path == meta-data/instance-id ]]; then printf 'i-0123456789abcdef0\n200'
elif [[ $path == meta-data/placement/region ]]; then printf 'eu-west-1\n200'
else printf 'Not Found\n404'; fi
exit 0
"""

# The GCP metadata server stub answers at computeMetadata/v1/ only requests that carry
# `Metadata-Flavor: Google`; the real one refuses a request without that header
# (cloud.google.com/compute/docs/metadata/querying-metadata). Its defaults are
# the real server's answers on a running Spot VM of a regional group: instance/preempted
# "FALSE" until Compute Engine preempts the VM, then "TRUE"
# (cloud.google.com/compute/docs/instances/create-use-spot, "Detect preemption"),
# instance/maintenance-event "NONE" until a host event is scheduled, then
# "TERMINATE_ON_HOST_MAINTENANCE" for a GPU VM (cloud.google.com/compute/docs/gpus/
# gpu-host-maintenance), instance/zone as projects/NUMBER/zones/ZONE and instance/name the
# VM's name (cloud.google.com/compute/docs/metadata/predefined-metadata-keys).
GCE_NAME = "pool-mig-x7kq"
GCE_ZONE = "projects/123456789012/zones/us-central1-a"
GCE_STUB = r"""
gce() {
  local path=${url#*/computeMetadata/v1/} file
  if [[ $flavor != Google ]]; then
    printf 'Missing required header "Metadata-Flavor": "Google"\n403'; exit 0
  fi
  file=$STUB_DIR/gce/$path
  if [[ -f $file ]]; then cat "$file"; printf '\n200'
  elif [[ $path == instance/name ]]; then printf '%s\n200' "GCE_NAME"
  elif [[ $path == instance/zone ]]; then printf '%s\n200' "GCE_ZONE"
  elif [[ $path == instance/preempted ]]; then printf 'FALSE\n200'
  elif [[ $path == instance/maintenance-event ]]; then printf 'NONE\n200'
  else printf 'Not Found\n404'; fi
  exit 0
}
""".replace("GCE_NAME", GCE_NAME).replace("GCE_ZONE", GCE_ZONE)

# `aws s3 sync SRC DEST` "downloads" one file; aws-s3-sync.rc makes it fail.
AWS_STUB = r"""
if [[ $1 == s3 && $2 == sync ]]; then
  if [[ -f $STUB_DIR/aws-s3-sync.rc ]]; then exit "$(cat "$STUB_DIR/aws-s3-sync.rc")"; fi
  if [[ $4 != s3://* ]]; then mkdir -p "$4" && printf 'data\n' >"$4/part-00000"; fi
  exit 0
fi
"""

# `gcloud storage rsync [--recursive] SRC DEST` copies between local directories and a
# bucket store on disk ($GCS_ROOT/<bucket>/<path> for gs://<bucket>/<path>), so a checkpoint
# one node flushes is there for the next node to pull. gcloud-rsync.rc makes it fail.
GCLOUD_STUB = r"""
if [[ $1 == storage && $2 == rsync ]]; then
  if [[ -f $STUB_DIR/gcloud-rsync.rc ]]; then exit "$(cat "$STUB_DIR/gcloud-rsync.rc")"; fi
  local_path() {
    if [[ $1 == gs://* ]]; then printf '%s/%s' "$GCS_ROOT" "${1#gs://}"; else printf '%s' "$1"; fi
  }
  src=$(local_path "${*: -2:1}") dest=$(local_path "${*: -1}")
  if [[ ! -d $src ]]; then echo "ERROR: no URLs matched: $src" >&2; exit 1; fi
  mkdir -p "$dest" && cp -R "$src/." "$dest/"
  exit 0
fi
"""

# `lsblk -nP -o NAME,FSTYPE,MOUNTPOINT /dev/X` (one disk and what holds it, as util-linux
# prints it) answers from `$STUB_DIR/lsblk-dev/X`, else as a blank disk; any other listing
# answers from lsblk.out.
LSBLK_STUB = r"""
device=${*: -1}
if [[ $1 == -nP && $device == /* ]]; then
  if [[ -f $STUB_DIR/lsblk-dev/${device##*/} ]]; then cat "$STUB_DIR/lsblk-dev/${device##*/}"
  else printf 'NAME="%s" FSTYPE="" MOUNTPOINT=""\n' "${device##*/}"; fi
  exit 0
fi
"""


# Stubs on every sandbox's PATH, with their exit status when the test sets none.
DEFAULT_STUBS = {
    "mountpoint": 1,
    "lsblk": 0,
    "mdadm": 0,
    "blkid": 2,
    "mkfs.xfs": 0,
    "mkfs.ext4": 0,
    "mount": 0,
    "nvidia-smi": 0,
    "who": 0,
    "pgrep": 1,
    "pkill": 1,
    "shutdown": 0,
    "systemctl": 0,
    "curl": 0,
    "aws": 0,
    "gcloud": 0,
}
STUB_BODIES = {
    "curl": GCE_STUB + CURL_STUB,
    "aws": AWS_STUB,
    "lsblk": LSBLK_STUB,
    "gcloud": GCLOUD_STUB,
}


def write_stub(directory: Path, name: str, body: str = "", status: int = 0) -> None:
    path = directory / name
    path.write_text(
        f"#!{BASH}\n"
        f"if [[ -e $STUB_DIR/{name}.missing ]]; then\n"
        f'  echo "{name}: command not found" >&2; exit 127\n'
        "fi\n"
        # One write per call, so stubs running at once never interleave their records.
        f"record={name}; for arg; do record+=$'\\x1f'\"$arg\"; done\n"
        'printf \'%s\\x1e\' "$record" >>"$STUB_CALLS"\n'
        f"{body}\n"
        f'if [[ -f $STUB_DIR/{name}.out ]]; then cat "$STUB_DIR/{name}.out"; fi\n'
        f'if [[ -f $STUB_DIR/{name}.rc ]]; then exit "$(cat "$STUB_DIR/{name}.rc")"; fi\n'
        f"exit {status}\n"
    )
    path.chmod(0o755)


@pytest.fixture(scope="session")
def shared_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Links to harmless host tools and the default stubs, shared by every test."""
    directory = tmp_path_factory.mktemp("shared-bin")
    for tool in SAFE_TOOLS:
        found = shutil.which(tool)
        assert found, f"{tool} is needed on the test machine"
        (directory / tool).symlink_to(found)
    for name, status in DEFAULT_STUBS.items():
        write_stub(directory, name, STUB_BODIES.get(name, ""), status)
    return directory


@dataclass
class Node:
    root: Path
    shared_bin: Path
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.bin = self.root / "bin"  # this test's own extra stubs, first on PATH
        self.stubs = self.root / "stub"
        self.state = self.root / "state"
        self.logs = self.root / "log"
        self.cache = self.root / "cache"
        self.dev = self.root / "dev"
        self.calls_file = self.root / "calls"
        self.stubs.mkdir()
        self.env = {
            "PATH": f"{self.bin}:{self.shared_bin}",
            "HOME": str(self.root),
            "LANG": "C",
            "STUB_DIR": str(self.stubs),
            "STUB_CALLS": str(self.calls_file),
            "AISTACK_STATE_DIR": str(self.state),
            "AISTACK_LOG_DIR": str(self.logs),
            "AISTACK_CACHE_DIR": str(self.cache),
            "AISTACK_DEV_DIR": str(self.dev),
            "AISTACK_RAID_DEVICE": str(self.dev / "md0"),
            "AISTACK_PROC_STAT": str(self.root / "proc-stat"),
            "GCS_ROOT": str(self.root / "gcs"),
        }

    def stub(self, name: str, body: str = "") -> None:
        """Add a stub for `name` (beyond the defaults); `body` runs after the call is logged."""
        self.bin.mkdir(exist_ok=True)
        write_stub(self.bin, name, body)

    def unstub(self, name: str) -> None:
        """Make `name` a missing command for this test."""
        if (self.bin / name).exists():
            (self.bin / name).unlink()
        if name in DEFAULT_STUBS:
            (self.stubs / f"{name}.missing").touch()

    def hide(self, *names: str) -> None:
        """Take `names` off PATH altogether, so even `command -v` does not find them."""
        path = self.root / "path"
        path.mkdir(exist_ok=True)
        for entry in self.shared_bin.iterdir():
            if entry.name not in names and not (path / entry.name).exists():
                (path / entry.name).symlink_to(entry)
        for name in names:
            (path / name).unlink(missing_ok=True)
            (self.bin / name).unlink(missing_ok=True)
        self.env["PATH"] = f"{self.bin}:{path}"

    def answer(self, name: str, out: str | None = None, rc: int | None = None) -> None:
        """What stub `name` prints and its exit status from now on."""
        for suffix, value in ((".out", out), (".rc", rc)):
            path = self.stubs / f"{name}{suffix}"
            if value is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(str(value))

    def imds(self, path: str, body: str | None) -> None:
        """Serve `body` at /latest/<path> on the metadata stub; None makes it a 404."""
        file = self.stubs / "imds" / path
        if body is None:
            file.unlink(missing_ok=True)
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(body)

    def gce(self, path: str, body: str | None) -> None:
        """Serve `body` at computeMetadata/v1/<path> on the GCP metadata stub; None: default."""
        file = self.stubs / "gce" / path
        if body is None:
            file.unlink(missing_ok=True)
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(body)

    def on_gcp(self, **env: str) -> None:
        """Make this a GCP node: the scripts read the GCP metadata server and use gcloud."""
        (self.root / "gcs").mkdir(exist_ok=True)
        self.env.update(AISTACK_CLOUD="gcp", AISTACK_SCHEDULER="mig", **env)

    def run(
        self, name: str, *args: str, check: bool = True, script_dir: Path = SCRIPTS_DIR, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run script `name` in the sandbox; `env` adds or overrides variables."""
        result = subprocess.run(
            [BASH, str(script_dir / name), *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=20,
        )
        if check:
            assert result.returncode == 0, f"{name} failed ({result.returncode}):\n{result.stderr}"
        return result

    def calls(self, name: str | None = None) -> list[list[str]]:
        """Every stub call so far as [name, *argv], or the argvs of stub `name`."""
        if not self.calls_file.exists():
            return []
        records = [r.split("\x1f") for r in self.calls_file.read_text().split("\x1e") if r]
        if name is None:
            return records
        return [record[1:] for record in records if record[0] == name]

    def clear_calls(self) -> None:
        self.calls_file.unlink(missing_ok=True)

    def log(self, script_name: str) -> str:
        path = self.logs / f"{script_name}.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def node(tmp_path: Path, shared_bin: Path) -> Node:
    return Node(tmp_path, shared_bin)
