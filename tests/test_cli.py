"""The CLI through typer's runner, against the repository's reference project and a tiny one."""

import gc
import json
import re
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aistack.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture
def tiny_project(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: tiny\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(
        textwrap.dedent(
            """
            import pulumi, pulumi_aws as aws
            bucket = aws.s3.Bucket("raw")
            pulumi.export("bucket", bucket.bucket)
            """
        )
    )
    return tmp_path


def test_preview_shows_the_tree_score_and_cost(tiny_project):
    result = runner.invoke(app, ["preview", str(tiny_project)])
    # A bare bucket fails mandatory rules: the preview says so and exits 1 (findings).
    assert result.exit_code == 1, result.output
    assert "raw" in result.output and "aws:s3/bucket:Bucket" in result.output
    assert "Checklist" in result.output
    assert "Monthly cost" in result.output


def test_preview_json_exits_1_on_a_mandatory_violation_and_0_when_clean(tiny_project):
    failing = runner.invoke(app, ["preview", str(tiny_project), "--format", "json"])
    assert failing.exit_code == 1
    assert json.loads(failing.output)["checklist"]["score"]["total"] == 37
    (tiny_project / "__main__.py").write_text("")  # nothing declared: nothing can fail
    assert runner.invoke(app, ["preview", str(tiny_project), "--format", "json"]).exit_code == 0


def test_text_output_follows_columns_and_no_color(tiny_project):
    narrow = runner.invoke(app, ["preview", str(tiny_project)], env={"COLUMNS": "72"})
    assert max(len(line) for line in narrow.output.splitlines() if "Next steps" not in line) <= 100
    wide = runner.invoke(app, ["preview", str(tiny_project)], env={"COLUMNS": "200"})
    assert max(map(len, wide.output.splitlines())) > 100
    # Colour (SGR 30-38) only on a terminal (FORCE_COLOR stands in for one here), and never
    # with NO_COLOR (no-color.org), which rich honours.
    colour = re.compile(r"\x1b\[(?:\d+;)*3[0-8]")
    assert not colour.search(narrow.output)
    coloured = runner.invoke(app, ["preview", str(tiny_project)], env={"FORCE_COLOR": "1"})
    assert colour.search(coloured.output)
    plain = runner.invoke(
        app, ["preview", str(tiny_project)], env={"FORCE_COLOR": "1", "NO_COLOR": "1"}
    )
    assert not colour.search(plain.output)


def test_preview_json_is_machine_readable(tiny_project):
    result = runner.invoke(app, ["preview", str(tiny_project), "--format", "json"])
    document = json.loads(result.output)
    assert [r["name"] for r in document["resources"]] == ["raw"]
    assert document["stack_outputs"]["bucket"].startswith("raw-")
    assert document["checklist"]["score"]["total"] == 37


def test_preview_mermaid_draws_the_tree(tiny_project):
    result = runner.invoke(app, ["preview", str(tiny_project), "--format", "mermaid"])
    assert result.output.startswith("graph TD")
    assert "root --> n1" in result.output


def test_check_exits_1_on_a_mandatory_violation(tiny_project):
    result = runner.invoke(app, ["check", str(tiny_project), "--format", "json"])
    assert result.exit_code == 1
    items = {item["id"]: item for item in json.loads(result.output)["items"]}
    assert items["D1"]["state"] == "failing"
    assert items["D1"]["findings"][0]["fix"]


def test_check_markdown_is_a_table_for_a_pull_request(tiny_project):
    result = runner.invoke(app, ["check", str(tiny_project), "--format", "markdown"])
    assert "| D1 |" in result.output and "failing" in result.output


def test_cost_json_has_totals(tiny_project):
    result = runner.invoke(app, ["cost", str(tiny_project), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert {"total_usd", "naive_total_usd", "ratio", "items"} <= set(json.loads(result.output))


def test_errors_print_one_clear_message_not_a_traceback(tmp_path):
    result = runner.invoke(app, ["preview", str(tmp_path)])
    assert result.exit_code == 2
    assert "no Pulumi.yaml" in result.output
    assert "Traceback" not in result.output


def test_catalog_gpus_lists_h100_types():
    # Wide enough that no type name wraps (the table follows COLUMNS).
    result = runner.invoke(app, ["catalog", "gpus", "--gpu", "H100"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "p5.48xlarge" in result.output and "g5.xlarge" not in result.output


def test_an_unknown_gpu_is_answered_with_the_nearest_and_the_list_command_not_a_traceback():
    result = runner.invoke(app, ["catalog", "gpus", "--gpu", "B200"])
    assert result.exit_code == 2
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert "did you mean 'H200'" in output and "aistack catalog gpus" in output
    assert "Traceback" not in output
    assert isinstance(result.exception, SystemExit)  # an exit, not an escaped ConfigError


def test_catalog_regions_ranks_allowed_regions():
    result = runner.invoke(
        app,
        ["catalog", "regions", "--gpu", "H100", "--allowed", "us-east-1", "--allowed", "eu-west-1"],
    )
    assert result.exit_code == 0, result.output
    assert "Chosen: us-east-1" in result.output
    assert "eu-west-1" in result.output


def test_reference_project_previews(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["preview", "."])
    assert result.exit_code == 0, result.output
    assert "aistack-dev" in result.output


def test_readme_diagram_is_the_reference_stacks(monkeypatch, example_previews):
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["preview", ".", "--format", "mermaid"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("graph TD") and "AwsTrainingPool" in result.output
    assert f"```mermaid\n{result.output}```" in (ROOT / "docs/reference.md").read_text()


def test_readme_kubernetes_diagram_is_the_kubernetes_stacks(monkeypatch, example_previews):
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["preview", "stacks/kubernetes", "--format", "mermaid"])
    assert result.exit_code == 0, result.output
    assert "K8sInferenceService" in result.output
    section = (ROOT / "docs/reference.md").read_text().split("## Kubernetes", 1)[1]
    assert f"```mermaid\n{result.output}```" in section


def test_readme_gcp_diagram_is_the_gcp_stacks(monkeypatch, example_previews):
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["preview", "stacks/gcp", "--format", "mermaid"])
    assert result.exit_code == 0, result.output
    assert "GcpInferenceTier" in result.output and "GcpTrainingPool" in result.output
    section = (ROOT / "docs/reference.md").read_text().split("## Google Cloud", 1)[1]
    assert f"```mermaid\n{result.output}```" in section.split("## Kubernetes", 1)[0]


def test_reference_preview_json_is_valid_json(monkeypatch, example_previews):
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["preview", ".", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert len(document["resources"]) > 100
    assert document["cost"]["naive_total_usd"] > document["cost"]["total_usd"] > 0


def test_preview_marks_advisory_findings_apart_from_failures(tiny_project):
    result = runner.invoke(app, ["preview", str(tiny_project)])
    summary = next(line for line in result.output.splitlines() if line.startswith("Checklist"))
    failing = result.output.count("✗ failing")
    advisory = result.output.count("! advisory")
    assert failing and advisory
    assert f"{failing} failing, {advisory} advisory" in summary
    # A stack-wide finding names the stack, not an empty resource name.
    assert "AIS-C3-01 (stack): no monthly COST budget" in result.output
    assert "AIS-C3-01 :" not in result.output


def test_preview_shows_components_with_counts_and_details_shows_every_resource(
    monkeypatch, example_previews
):
    from aistack import engine

    monkeypatch.chdir(ROOT)
    graph = engine.run_project(ROOT)
    pool = graph.named("training")
    held = [r for r in graph.resources if graph.component_of(r) == pool and r is not pool]
    retained = sum(1 for r in held if r.retain_on_delete or r.protect)
    short = runner.invoke(app, ["preview", "."])
    assert short.exit_code == 0, short.output
    assert f"AwsTrainingPool  {len(held)} resources, {retained} retained" in short.output
    assert "training-compute-environment" not in short.output
    assert "Next steps" in short.output
    detailed = runner.invoke(app, ["preview", ".", "--details"])
    assert "training-compute" in detailed.output
    assert len(detailed.output.splitlines()) > 3 * len(short.output.splitlines())


def test_next_steps_print_whole_values_never_cut(monkeypatch, example_previews):
    monkeypatch.chdir(ROOT)
    output = runner.invoke(app, ["preview", "."]).output
    line = next(line for line in output.splitlines() if "submit_training_job:" in line)
    assert line.rstrip().endswith("cut -c1-12)")
    assert "…" not in line


def test_cost_is_grouped_by_component_and_prints_the_workload_as_written(
    monkeypatch, example_previews
):
    monkeypatch.chdir(ROOT)
    output = runner.invoke(app, ["cost", "."]).output
    assert "Workload (aistack:workload)" in output
    assert "trainingGpuHoursPerMonth: 400" in output
    assert "training_gpu_hours_per_month" not in output
    lines = output.splitlines()
    training = next(i for i, line in enumerate(lines) if line.startswith("│ training "))
    assert "230.37" in lines[training]  # the component's subtotal heads its resources
    assert lines[training + 1].startswith("│   training-")


def test_cost_of_a_stack_without_a_workload_says_it_is_assumed(tiny_project):
    output = runner.invoke(app, ["cost", str(tiny_project)]).output
    assert "assumed defaults: no aistack:workload in config" in output


def test_the_console_script_runs_a_command_with_the_collector_out_of_its_way(tiny_project, capsys):
    from importlib.metadata import entry_points

    from aistack import cli

    (script,) = entry_points(group="console_scripts", name="aistack")
    assert script.value == "aistack.cli:main"
    saved = gc.get_threshold()
    alive = object.__new__(type("Alive", (), {}))  # tracked by the collector, not frozen yet
    assert any(thing is alive for thing in gc.get_objects())
    try:
        with pytest.raises(SystemExit) as exited:
            cli.main(["preview", str(tiny_project)])
        during = gc.get_threshold()
    finally:
        gc.set_threshold(*saved)
    assert exited.value.code == 1  # the bare bucket fails mandatory rules
    assert "aws:s3/bucket:Bucket" in capsys.readouterr().out
    # The young generations as they were; the oldest never reached by a one-command process.
    assert during[:2] == saved[:2] and during[2] >= 10**9
    # And what lives when the command ends is frozen: exit's last collection skips it.
    assert not any(thing is alive for thing in gc.get_objects())


def test_the_same_program_gives_byte_identical_json_in_fresh_processes():
    """Resources, findings and cost items come out in a stable order with sorted keys, so
    two reports of one program diff to nothing (issue 30, deliverable 1). Two processes at
    once: the engine's registration order differs between runs of this stack."""
    import subprocess
    import sys

    command = [
        sys.executable,
        "-c",
        "from aistack.cli import app; app()",
        "preview",
        "stacks/gcp-training",
        "--format",
        "json",
    ]
    runs = [
        subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err.decode()
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert b'"resources"' in outputs[0]


def test_the_json_report_does_not_depend_on_the_order_resources_registered(example_previews):
    """What the two-process test above can only catch when the race goes the other way:
    the same graph with its resources and their dependencies reversed gives the same bytes."""
    import copy
    import dataclasses
    import json

    from aistack import cost, policy, report
    from tests._harness import previews

    graph = previews.run_project(ROOT / "stacks/gcp-training")
    shuffled = copy.deepcopy(graph)
    shuffled.resources[:] = [
        dataclasses.replace(r, dependencies=tuple(reversed(r.dependencies)))
        for r in reversed(shuffled.resources)
    ]

    def render(g):
        document = report.preview_json(g, policy.evaluate(g), cost.estimate(g))
        return json.dumps(document, indent=2, sort_keys=True)

    assert render(graph) == render(shuffled)
