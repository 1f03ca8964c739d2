"""aistack._extras: a missing cloud SDK is one line naming the extra that installs it."""

import pytest

from aistack._extras import EXTRA_OF, MissingExtraError, missing_extra
from aistack.errors import AistackError


@pytest.mark.parametrize(("module", "extra"), sorted(EXTRA_OF.items()))
def test_each_sdk_names_its_extra(module, extra):
    error = ModuleNotFoundError(f"No module named '{module}'", name=f"{module}.sub")
    friendly = missing_extra(error, "aistack.gcp.TrainingPool")
    assert isinstance(friendly, MissingExtraError)
    assert isinstance(friendly, AistackError)  # the CLI prints it as its one-line error
    assert f"pip install 'aistack[{extra}]'" in str(friendly)
    assert "\n" not in str(friendly)


def test_another_missing_module_is_left_as_it_is():
    assert missing_extra(ModuleNotFoundError("x", name="yaml"), "aistack") is None


def test_every_extra_named_is_declared_in_pyproject():
    import tomllib
    from pathlib import Path

    declared = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert set(EXTRA_OF.values()) <= set(declared["project"]["optional-dependencies"])
