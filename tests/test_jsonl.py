"""The one JSONL module: whole fsynced lines appended; reading, tailing and following pass over torn lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sacbot import jsonl
from sacbot.errors import UserError


def test_append_adds_whole_lines_and_can_refuse_nan(tmp_path: Path) -> None:
    log = tmp_path / "new" / "metrics.jsonl"  # the folder is created
    jsonl.append(log, {"b": 1, "a": float("nan")})
    jsonl.append(log, {"c": [1, 2]})
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and lines[0] == '{"a": NaN, "b": 1}' and json.loads(lines[1]) == {"c": [1, 2]}
    with pytest.raises(ValueError):
        jsonl.append(log, {"bad": float("inf")}, allow_nan=False)
    assert len(log.read_text().splitlines()) == 2  # nothing half-written


def test_parse_counts_malformed_but_not_blank_lines() -> None:
    lines = jsonl.parse('{"a": 1}\n\n   \n[1]\n{"b": \n"text"\n{"c": 2}')
    assert lines.rows == [{"a": 1}, {"c": 2}] and lines.malformed == 3 and not lines.complete
    assert jsonl.parse("").complete and jsonl.parse('{"a": 1}\n').complete


def test_read_skips_a_torn_last_line_and_a_missing_file_is_empty(tmp_path: Path) -> None:
    log = tmp_path / "campaign_log.jsonl"
    jsonl.append(log, {"event": "start"})
    with open(log, "a") as fh:
        fh.write('{"event": "chunk_done", "chu')  # a kill mid-write
    lines = jsonl.read(log)
    assert lines.rows == [{"event": "start"}] and lines.malformed == 1 and not lines.complete
    assert jsonl.read(tmp_path / "absent.jsonl") == jsonl.Lines()
    assert jsonl.read_text(tmp_path / "absent.jsonl") is None


def test_an_unreadable_file_is_one_clear_error(tmp_path: Path) -> None:
    log = tmp_path / "eval_log.jsonl"
    log.mkdir()  # exists, cannot be read as a file (a permission bit would not bind for root)
    with pytest.raises(UserError, match="cannot read .*eval_log.jsonl"):
        jsonl.read(log)


def test_tail_reads_the_last_bytes_without_the_cut_line(tmp_path: Path) -> None:
    log = tmp_path / "rounds.jsonl"
    for i in range(100):
        jsonl.append(log, {"round": i})
    with open(log, "a") as fh:
        fh.write('{"round": 10')  # torn
    rows = jsonl.tail(log, 200)
    assert rows and rows[-1] == {"round": 99} and all(set(r) == {"round"} for r in rows)
    assert [r["round"] for r in rows] == list(range(rows[0]["round"], 100))
    assert jsonl.tail(log, 10**6)[0] == {"round": 0}
    assert jsonl.tail(tmp_path / "absent.jsonl", 100) == []


def test_follower_returns_new_complete_lines_only(tmp_path: Path) -> None:
    log = tmp_path / "rounds.jsonl"
    log.write_text('{"round": 1}\n')
    follow = jsonl.Follower(log)  # starts at the end: earlier lines do not count
    assert follow.read() == []
    with open(log, "a") as fh:
        fh.write('{"round": 2}\nnot json\n{"round": 3}\n{"round": 4, "ski')
    assert follow.read() == [{"round": 2}, {"round": 3}]
    with open(log, "a") as fh:
        fh.write('pped_turns": 4}\n')
    assert follow.read() == [{"round": 4, "skipped_turns": 4}]
    assert jsonl.Follower(tmp_path / "later.jsonl").read() == []
