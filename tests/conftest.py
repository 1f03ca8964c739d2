"""Shared test setup: nothing here may touch a real cloud."""

import os

import pytest

from tests import session_jobs

# Any AWS SDK call a test forgets to mock must fail rather than reach an account.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


# The session's background jobs (tests/session_jobs.py): started by the process that
# schedules the tests (the xdist controller, or the only one), as the session starts or,
# with -k/-m, once the tests are known.
def pytest_configure(config):
    session_jobs.configure(config)


def pytest_sessionstart(session):
    session_jobs.start_early(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    session_jobs.start(node.config, ids)


def pytest_collection_finish(session):
    if not getattr(session.config.option, "numprocesses", None):
        session_jobs.start(session.config, session_jobs.needed_by_items(session.items))


def pytest_collection_modifyitems(items):
    # The tests that wait for a job run last, giving it the rest of the suite's time.
    items.sort(key=session_jobs.needs_a_job)


def pytest_unconfigure(config):
    session_jobs.stop(config)
