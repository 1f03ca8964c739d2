"""Stack-file and Pulumi-config mistakes are one ConfigError naming the file, the key and the
fix; the engine refuses what the Pulumi engine refuses; secrets never reach a program as
ciphertext. Each case is run through the CLI as a user would, and must print one line."""

import textwrap

import pulumi
import pulumi_aws as aws
import pytest
from typer.testing import CliRunner

from aistack import engine
from aistack.cli import app
from aistack.engine.runner import SECRET_PLACEHOLDER
from aistack.errors import ConfigError, EngineError

runner = CliRunner()

PROGRAM = """
import pulumi, pulumi_aws as aws
config = pulumi.Config()
region = pulumi.Config("aws").require("region")
budget = config.require_object("budget")
retries = config.get_int("retries") or 1
aws.s3.Bucket("raw", tags={"emails": ",".join(budget["alertEmails"])})
"""

GOOD_STACK = """
config:
  aws:region: us-east-1
  tiny:budget:
    alertEmails: [team@example.com]
"""


def _project(tmp_path, stack_file: str = GOOD_STACK, project_file: str | None = None):
    (tmp_path / "Pulumi.yaml").write_text(project_file or "name: tiny\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(textwrap.dedent(stack_file).lstrip())
    (tmp_path / "__main__.py").write_text(PROGRAM)
    return tmp_path


def _one_line_error(tmp_path, *extra: str) -> str:
    result = runner.invoke(app, ["preview", str(tmp_path), *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_the_good_project_previews(tmp_path):
    result = runner.invoke(app, ["preview", str(_project(tmp_path))])
    # Its files are good (no exit 2); its bare bucket fails mandatory rules (exit 1).
    assert result.exit_code == 1, result.output
    assert "aistack preview project" in result.output


@pytest.mark.parametrize(
    ("stack_file", "expected"),
    [
        ("config:\n\taws:region: us-east-1\n", ["Pulumi.dev.yaml", "line 2", "never tabs"]),
        (
            "config:\n  aws:region: us-east-1\n  tiny:budget: {alertEmails: [a@b.c}\n",
            ["Pulumi.dev.yaml", "line 3", "not valid YAML"],
        ),
        ("config:\n  - aws:region: us-east-1\n", ["Pulumi.dev.yaml config", "not a list"]),
        ("- config\n", ["Pulumi.dev.yaml", "`config:`"]),
    ],
    ids=["tab-indentation", "unclosed-bracket", "config-as-list", "document-as-list"],
)
def test_a_broken_stack_file_is_named_with_the_line(tmp_path, stack_file, expected):
    line = _one_line_error(_project(tmp_path, stack_file))
    for text in expected:
        assert text in line


def test_a_broken_project_file_is_named(tmp_path):
    line = _one_line_error(_project(tmp_path, project_file="name: [tiny\nruntime: python\n"))
    assert "Pulumi.yaml: is not valid YAML" in line


def test_a_project_file_that_is_not_a_mapping_is_named(tmp_path):
    line = _one_line_error(_project(tmp_path, project_file="- tiny\n"))
    assert "Pulumi.yaml" in line and "not a list" in line


def test_a_missing_required_key_names_the_key_and_the_stack_file(tmp_path):
    line = _one_line_error(_project(tmp_path, "config:\n  aws:region: us-east-1\n"))
    assert "tiny:budget" in line and "Pulumi.dev.yaml" in line
    assert "pulumi config set tiny:budget" in line


def test_a_value_of_the_wrong_type_says_what_was_expected(tmp_path):
    stack = GOOD_STACK + "  tiny:retries: three\n"
    line = _one_line_error(_project(tmp_path, stack))
    assert "tiny:retries" in line and "expected a whole number, got 'three'" in line


def test_a_list_written_as_one_string_says_how_to_write_a_list(tmp_path):
    stack = "config:\n  aws:region: us-east-1\n  tiny:budget: team@example.com\n"
    line = _one_line_error(_project(tmp_path, stack))
    assert "tiny:budget" in line and "'team@example.com'" in line
    assert "JSON" not in line
    assert "`[a, b]`" in line


def test_a_missing_stack_file_is_named_with_the_stacks_there_are(tmp_path):
    line = _one_line_error(_project(tmp_path), "--stack", "prod")
    assert "Pulumi.prod.yaml" in line and "stacks here: dev" in line


def test_a_project_without_any_stack_file_runs_with_empty_config(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: bare\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("import pulumi\npulumi.export('x', 1)\n")
    assert engine.run_project(tmp_path, stack="dev").stack_outputs == {"x": 1}


# ---- what the Pulumi engine refuses ---------------------------------------------------------


def test_two_resources_with_the_same_name_fail_as_under_pulumi():
    def program():
        aws.s3.Bucket("data")
        aws.s3.Bucket("data")

    with pytest.raises(EngineError) as caught:
        engine.run(program)
    # pulumi/pulumi pkg/resource/deploy/step_generator.go: the engine's own wording.
    assert str(caught.value) == (
        "Duplicate resource URN 'urn:pulumi:dev::aistack::pulumi:pulumi:Stack$"
        "aws:s3/bucket:Bucket::data'; try giving it a unique name"
    )


def test_two_components_with_the_same_name_fail_even_though_children_differ():
    class Team(pulumi.ComponentResource):
        def __init__(self, name: str, suffix: str) -> None:
            super().__init__("test:index:Team", name, None, None)
            aws.s3.Bucket(f"{name}-{suffix}", opts=pulumi.ResourceOptions(parent=self))

    with pytest.raises(EngineError, match=r"test:index:Team::team'"):
        engine.run(lambda: (Team("team", "a"), Team("team", "b")))


def test_the_same_name_under_different_types_is_allowed():
    def program():
        aws.s3.Bucket("data")
        aws.iam.Role("data", assume_role_policy="{}")

    assert len(engine.run(program)) == 2


# ---- secrets --------------------------------------------------------------------------------


def test_secure_values_reach_the_program_as_a_marked_placeholder_never_as_ciphertext():
    seen = {}

    def program():
        config = pulumi.Config()
        seen["token"] = config.require_secret("token")
        settings = config.require_object("settings")
        aws.s3.Bucket("b", tags={"owner": settings["owner"], "key": settings["apiKey"]})

    graph = engine.run(
        program,
        project="tiny",
        config={
            "token": {"secure": "v1:AAABBBCCC"},
            "settings": {"owner": "ml", "apiKey": {"secure": "v1:DDDEEE"}},
        },
    )
    tags = graph.named("b").inputs["tags"]
    assert tags == {"owner": "ml", "key": f"{SECRET_PLACEHOLDER}:tiny:settings.apiKey"}
    assert "v1:" not in str(graph.resources) + str(graph.config)
    # Said once, naming every key that holds a secret.
    assert len(graph.notes) == 1
    assert "tiny:token" in graph.notes[0] and "tiny:settings" in graph.notes[0]


def test_config_errors_from_engine_run_are_config_errors():
    with pytest.raises(ConfigError) as caught:
        engine.run(lambda: pulumi.Config("aws").require("region"))
    assert caught.value.fields == ["aws:region"]
