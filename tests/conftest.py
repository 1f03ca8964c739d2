"""Shared test setup: nothing here may touch a real cloud."""

import os
import sys

import pytest

from aistack import engine
from tests._harness import collector, previews, session_jobs, verdict_coverage, xdist_groups


def _rewrite_the_asserts_of_test_code_only() -> None:
    """pytest rewrites the asserts of every module of a distribution with a pytest plugin,
    not only of the plugin: all of aistack (its plugin is aistack.testing) and all of
    hypothesis. A rewritten module is parsed and compiled from source in every process
    (its compiled bytecode unused, and with PYTHONDONTWRITEBYTECODE pytest keeps no copy):
    about 180 library modules, 3 s of each xdist worker. Their asserts are no test's:
    only the plugin modules' stay rewritten. (pytest's hook keeps the marked names in
    `_must_rewrite`; if a pytest release renames it, nothing changes but the speed.)"""
    for hook in sys.meta_path:
        marked = getattr(hook, "_must_rewrite", None)
        if not isinstance(marked, set):
            continue
        if "aistack" in marked:
            marked.discard("aistack")
            marked.add("aistack.testing")
        marked.discard("hypothesis")
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


_rewrite_the_asserts_of_test_code_only()

# Any AWS SDK call a test forgets to mock must fail rather than reach an account.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def example_previews(monkeypatch):
    """`aistack.engine.run_project` gives each example stack's preview from one run per
    process, as a copy (tests/_harness/previews.py): for the tests that preview one
    through the CLI."""
    monkeypatch.setattr(engine, "run_project", previews.run_project)


# The session's background jobs (tests/_harness/session_jobs.py): started by the process that
# schedules the tests (the xdist controller, or the only one), as the session starts or,
# with -k/-m, once the tests are known.
def pytest_configure(config):
    session_jobs.configure(config)
    # Every rule has a compliant and a non-compliant case: checked across xdist workers.
    config.pluginmanager.register(verdict_coverage.RuleCaseCoverage(config), "rule-cases")


def pytest_sessionstart(session):
    session_jobs.start_early(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    session_jobs.start(node.config, ids)


def pytest_collection_finish(session):
    if not getattr(session.config.option, "numprocesses", None):
        session_jobs.start(session.config, session_jobs.needed_by_items(session.items))


@pytest.hookimpl(trylast=True)  # after xdist's own, whose group marks xdist_groups redoes
def pytest_collection_modifyitems(config, items):
    # The tests that wait for a job run last, giving it the rest of the suite's time.
    items.sort(key=session_jobs.needs_a_job)
    xdist_groups.apply(config, items)


_FREEZER = collector.ModuleFreezer()


@pytest.hookimpl(tryfirst=True)  # before the module's fixtures are set up
def pytest_runtest_setup(item):
    _FREEZER.starting(item)


def pytest_unconfigure(config):
    session_jobs.stop(config)
