"""The skip list: data in the repository, every entry with its reason; pending entries carry
the defect their fix belongs to."""

from __future__ import annotations

import pytest

from aistack.errors import ConfigError
from aistack.scan import DEFAULT_SKIPS, Finding, SkipList


def _finding(check="CKV_AWS_1", resource="logs-bucket", title="something"):
    return Finding("checkov", check, resource, f"aws_x.{resource}", title)


def test_the_shipped_skip_list_loads_and_every_entry_has_a_reason():
    skips = SkipList.load(DEFAULT_SKIPS)
    assert skips.entries
    assert all(len(entry.reason) > 20 for entry in skips.entries)
    assert all(entry.defect for entry in skips.entries if entry.pending)
    assert all(entry.resources for entry in skips.entries)


def test_an_entry_without_a_reason_is_refused():
    with pytest.raises(ConfigError) as error:
        SkipList.from_dict({"skips": [{"check": "CKV_AWS_18", "resources": ["logs-bucket"]}]})
    assert error.value.fields == ["skips:skips[0].reason"]


def test_a_pending_entry_without_its_defect_is_refused():
    with pytest.raises(ConfigError) as error:
        SkipList.from_dict({"pending": [{"check": "CKV_AWS_2", "reason": "HTTP listener"}]})
    assert error.value.fields == ["skips:pending[0].defect"]


def test_triage_splits_failed_skipped_and_pending():
    skips = SkipList.from_dict(
        {
            "skips": [
                {"check": "CKV_AWS_145", "resources": ["logs-*"], "reason": "SSE-S3 for ALB logs"}
            ],
            "pending": [
                {
                    "check": "CKV_AWS_2",
                    "resources": ["inference-http"],
                    "defect": "10",
                    "reason": "plain HTTP",
                }
            ],
        }
    )
    triage = skips.triage(
        [
            _finding("CKV_AWS_145", "logs-bucket"),
            _finding("CKV_AWS_145", "dataset-bucket"),
            _finding("CKV_AWS_2", "inference-http"),
        ]
    )
    assert [f.resource for f in triage.failed] == ["dataset-bucket"]
    assert [f.resource for f, _ in triage.skipped] == ["logs-bucket"]
    assert [(f.resource, e.defect) for f, e in triage.pending] == [("inference-http", "10")]


def test_a_title_pattern_narrows_an_entry_to_one_problem():
    skips = SkipList.from_dict(
        {
            "skips": [
                {
                    "check": "IAM_CONDITION_KEY",
                    "title": "s3:prefix *",
                    "resources": ["*"],
                    "reason": "known dead grant",
                }
            ]
        }
    )
    triage = skips.triage(
        [
            _finding(
                "IAM_CONDITION_KEY",
                "read",
                "s3:prefix (StringLike) does not apply to s3:GetBucketLocation",
            ),
            _finding(
                "IAM_CONDITION_KEY",
                "read",
                "kms:ViaService (StringEquals) does not apply to s3:GetObject",
            ),
        ]
    )
    assert [f.title.split()[0] for f in triage.failed] == ["kms:ViaService"]


def test_a_pattern_matching_no_finding_is_stale():
    skips = SkipList.from_dict(
        {
            "pending": [
                {
                    "check": "CKV_AWS_341",
                    "resources": ["a-lt", "b-lt"],
                    "defect": "9",
                    "reason": "hop limit 2",
                }
            ]
        }
    )
    stale = skips.stale([_finding("CKV_AWS_341", "a-lt")])
    assert len(stale) == 1 and "'b-lt'" in stale[0]
