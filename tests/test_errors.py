import pytest

from aistack.errors import ConfigError, Problem, Problems


def test_config_error_lists_every_problem_with_field_and_fix():
    error = ConfigError([Problem("a.b", "too big.", "lower it."), Problem("c", "missing.")])
    text = str(error)
    assert "2 problems" in text
    assert "a.b: too big. Fix: lower it." in text
    assert "c: missing." in text
    assert error.fields == ["a.b", "c"]


def test_problems_collect_and_raise_together():
    problems = Problems()
    problems.add("x", "bad.", "fix x.")
    problems.add("y", "bad.", "fix y.")
    with pytest.raises(ConfigError) as caught:
        problems.raise_if_any()
    assert caught.value.fields == ["x", "y"]


def test_no_problems_raise_nothing():
    Problems().raise_if_any()


def test_prefixed_moves_fields_under_a_parent():
    assert ConfigError("bad", field="x").prefixed("pool").fields == ["pool.x"]
