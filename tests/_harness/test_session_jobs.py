"""tests/_harness/session_jobs.py's early results: what a running job publishes reaches the tests,
and a test never waits for what a job will not publish."""

from __future__ import annotations

import pytest

from tests._harness import session_jobs


@pytest.fixture
def session_directory(tmp_path, monkeypatch):
    monkeypatch.setitem(session_jobs._SESSION, "config", object())
    monkeypatch.setattr(session_jobs, "shared_directory", lambda config: tmp_path)
    return tmp_path


def test_a_job_process_publishes_into_the_sessions_directory(session_directory, monkeypatch):
    monkeypatch.setenv(session_jobs._JOB_DIRECTORY, str(session_directory))
    session_jobs.publish("early.bin", b"\x00graphs")
    assert (session_directory / "early.bin").read_bytes() == b"\x00graphs"
    assert [p.name for p in session_directory.iterdir()] == ["early.bin"]  # no partial left


def test_outside_a_job_publishing_writes_nothing(session_directory, monkeypatch):
    monkeypatch.delenv(session_jobs._JOB_DIRECTORY, raising=False)
    session_jobs.publish("early.bin", b"graphs")
    assert list(session_directory.iterdir()) == []


def test_what_the_started_job_published_is_read(session_directory):
    (session_directory / "scans.pid").write_text("1")
    (session_directory / "early.bin").write_bytes(b"graphs")
    assert session_jobs.published("early.bin", "scans") == b"graphs"


@pytest.mark.parametrize("ending", ["scans.json", "scans.error"])
def test_a_job_that_ended_without_publishing_gives_nothing(session_directory, ending):
    (session_directory / "scans.pid").write_text("1")
    (session_directory / ending).write_text("{}")
    assert session_jobs.published("early.bin", "scans") is None


def test_a_job_the_session_did_not_start_gives_nothing(session_directory):
    assert session_jobs.published("early.bin", "scans") is None
