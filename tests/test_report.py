"""Tests for engine/report.py: the learner report against its frozen golden file."""

from __future__ import annotations

import dataclasses
import re

import pytest
from golden_support import assert_matches_golden
from paths import GOLDEN_REPORT

from engine.report import render_report
from engine.worked_example import chapter_results


def test_report_matches_golden_byte_for_byte():
    assert_matches_golden(render_report(), GOLDEN_REPORT, "render_report()")


def test_report_is_key_value_lines_with_unique_keys():
    text = render_report()
    assert text.endswith("\n") and "\r" not in text
    lines = text.splitlines()
    keys = [line.split("=", 1)[0] for line in lines]
    assert all("=" in line and line == line.strip() for line in lines)
    assert len(keys) == len(set(keys))


def test_report_states_the_chapter_facts():
    lines = dict(line.split("=", 1) for line in render_report().splitlines())
    assert lines["input_gradient"] == "identity+branch [0.5,3.25]"
    assert lines["branch_contribution"].endswith("[-0.5,2.25]")
    assert lines["stack[4]"] == "plain:[0.0078125,-0.00390625] residual:[0.6328125,-0.31640625]"
    assert lines["retention[4]"] == "plain:0.00390625 residual:0.31640625"
    assert lines["verified"] == (
        "identity:exact gradient:added parameters:branch-owned broadcast:forbidden"
    )
    assert lines["replay_bitwise"] == "true"


def test_report_renders_the_results_it_is_given():
    results = chapter_results()
    failed = dataclasses.replace(results, replay_bitwise=False)
    assert "replay_bitwise=false\n" in render_report(failed)
    assert render_report(results) == render_report(results)


def test_golden_diff_is_shown_on_mismatch(tmp_path):
    golden = tmp_path / "golden.txt"
    golden.write_text("a=1\nb=2\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=re.escape("-b=2\n+b=3")):
        assert_matches_golden("a=1\nb=3\n", golden)


def test_a_changed_result_fails_the_report_gate():
    changed = dataclasses.replace(chapter_results(), replay_bitwise=False)
    expected = re.escape("-replay_bitwise=true\n+replay_bitwise=false")
    with pytest.raises(AssertionError, match=expected):
        assert_matches_golden(render_report(changed), GOLDEN_REPORT, "render_report()")
