"""The contracts floor stays a floor: no SDK, and the old module paths still answer."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

FLOOR = Path(__file__).resolve().parents[2] / "aistack" / "contracts"


def runtime_imports(tree: ast.AST) -> list[str]:
    """The modules a module imports when it runs: not those under `if TYPE_CHECKING:`,
    which only a type checker reads."""
    names: list[str] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
        else:
            names += runtime_imports(node)
    return names


def test_the_contracts_import_no_sdk():
    # Readers (rules, queries, scan) import the floor to know a label or a limit; loading
    # pulumi or a cloud SDK for that would cost every `aistack check` the SDK's import.
    sdk = [
        f"{path.name}: {name}"
        for path in sorted(FLOOR.glob("*.py"))
        for name in runtime_imports(ast.parse(path.read_text()))
        if name.split(".")[0].startswith("pulumi")
    ]
    assert sdk == []


def test_importing_the_floor_loads_no_cloud_sdk():
    # aistack.config, below the floor, types Args with pulumi's Input: the core SDK loads,
    # no provider SDK does.
    program = (
        "import sys, aistack.contracts.k8s, aistack.contracts.gcp, aistack.contracts.images, "
        "aistack.contracts.model_versions, aistack.contracts.quota_needs\n"
        "print(sorted(m for m in sys.modules if m.startswith('pulumi_')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("aistack.images", "aistack.contracts.images"),
        ("aistack.model_versions", "aistack.contracts.model_versions"),
        ("aistack.aws.inference_tier", "aistack.aws.inference"),
    ],
)
def test_an_old_module_path_warns_and_re_exports_its_new_home(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new):
        alias = importlib.import_module(old)
    home = importlib.import_module(new)
    assert alias.__all__ == home.__all__
    assert all(getattr(alias, name) is getattr(home, name) for name in home.__all__)


PACKAGE = FLOOR.parent
#: Deployed alone, without aistack: each keeps its own copy, held equal by its tests
#: (tests/aws/lambdas, tests/gcp/functions).
DEPLOYED_ALONE = ("aws/lambdas/", "gcp/functions/")


def string_constants(path: Path) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments: name -> text."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[node.targets[0].id] = node.value.value
    return found


def test_no_module_copies_a_contract_constant():
    # A tag, label or annotation key defined twice drifts: one side renames it and the
    # rule that reads it passes on nothing. The contracts (and the governance tags in
    # aistack.config) are the one definition; everyone else imports it.
    homes = [*sorted(FLOOR.glob("*.py")), PACKAGE / "config.py"]
    contract = {
        text: f"{path.relative_to(PACKAGE)}:{name}"
        for path in homes
        for name, text in string_constants(path).items()
        if text.startswith(("aistack:", "aistack.dev/", "aistack-"))
    }
    copies = [
        f"{path.relative_to(PACKAGE)}:{name} = {text!r} copies {contract[text]}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in homes and not str(path.relative_to(PACKAGE)).startswith(DEPLOYED_ALONE)
        for name, text in string_constants(path).items()
        if text in contract
    ]
    assert copies == []


def test_the_old_need_types_warn_and_give_the_one_capacity_need():
    # aws.QuotaNeed (instance_types) and gcp.GpuNeed (region first) were two spellings of
    # one idea; kept one release, each builds the CapacityNeed it meant.
    from aistack.aws import gpu_quota as aws_quota
    from aistack.contracts.capacity import CapacityNeed, HasCapacityNeeds
    from aistack.gcp import gpu_quota as gcp_quota

    QuotaNeed, GpuNeed = aws_quota.QuotaNeed, gcp_quota.GpuNeed  # noqa: N806 - old names
    # Read from their modules, which warn on every use (`aws.HasQuotaNeeds` warns on the
    # first, then the package keeps what it resolved).
    with pytest.warns(DeprecationWarning, match="HasCapacityNeeds"):
        HasQuotaNeeds = aws_quota.HasQuotaNeeds  # noqa: N806
    with pytest.warns(DeprecationWarning, match="HasCapacityNeeds"):
        HasGpuNeeds = gcp_quota.HasGpuNeeds  # noqa: N806

    with pytest.warns(DeprecationWarning, match="CapacityNeed"):
        aws_need = QuotaNeed("train", ("p5.48xlarge",), 2, "spot", surge_nodes=1)
    with pytest.warns(DeprecationWarning, match="CapacityNeed"):
        gcp_need = GpuNeed("train", "europe-west4", ("a3-highgpu-8g",), 2, "spot")
    assert aws_need == CapacityNeed("train", ("p5.48xlarge",), 2, "spot", surge_nodes=1)
    assert gcp_need == CapacityNeed("train", ("a3-highgpu-8g",), 2, "spot", region="europe-west4")
    assert HasQuotaNeeds is HasGpuNeeds is HasCapacityNeeds
    with pytest.warns(DeprecationWarning, match="machine_types"):
        assert aws_need.instance_types == ("p5.48xlarge",)
