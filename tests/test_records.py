"""The record models: one reader and writer each, tolerant of bad values, and older files still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sacbot import jsonl
from sacbot.errors import UserError
from sacbot.records import (
    LEAGUE_LINE,
    BestScore,
    CampaignEvent,
    EvalRecord,
    LeaguePoolLine,
    LeagueSnapshotLine,
    MetricsLine,
    RoundLine,
    append_eval,
    eval_history,
    parse_rows,
    read_best_score,
    read_eval_log,
    read_events,
    read_round_counter,
    read_round_tail,
    write_best_score,
    write_round_counter,
)
from sacbot.rundir import RunPaths


def test_round_counter_round_trip_and_one_rule_for_bad_values(tmp_path: Path) -> None:
    path = tmp_path / "weights" / "round_counter.json"
    assert read_round_counter(path) is None  # missing
    write_round_counter(path, 7, 1.5)
    assert json.loads(path.read_text()) == {"rounds": 7, "time": 1.5}  # the format every writer wrote
    assert read_round_counter(path) == 7
    for text in ('{"rounds": 3}', '{"rounds": 3, "time": 2, "later": "field"}'):
        path.write_text(text)
        assert read_round_counter(path) == 3
    for bad in (
        "",
        "torn {",
        "[]",
        '{"rounds": "3"}',
        '{"rounds": 3.0}',
        '{"rounds": true}',
        '{"rounds": -1}',
    ):
        path.write_text(bad)
        assert read_round_counter(path) is None, bad
    path.unlink()
    path.mkdir()  # unreadable as a file
    assert read_round_counter(path) is None


def test_round_lines_read_odd_fields_as_missing_and_keep_unknown_keys(tmp_path: Path) -> None:
    play = {"time": 1.0, "opponent": "Walls", "outcome": "won", "own_score": 75, "enemy_score": 25.0}
    line = RoundLine.model_validate({**play, "skipped_turns": "x", "tick_to_intent_p99_ms": float("nan")})
    assert line.own == 75.0 and line.enemy == 25.0 and line.skipped_turns is None
    assert line.tick_to_intent_p99_ms is None and line.model_extra == {}
    fast = RoundLine.model_validate(
        {"written_by": "sacbot train-fast", "score": 3, "opponent_score": 1, "x": 1}
    )
    assert (fast.own, fast.enemy, fast.own_score) == (3.0, 1.0, None) and fast.model_extra == {"x": 1}
    assert RoundLine.model_validate({"opponent": True, "outcome": ""}).opponent is None
    rounds = tmp_path / "rounds.jsonl"
    for i in range(50):
        jsonl.append(rounds, {**play, "round_total": i})
    rounds.open("a").write('{"round_total": 50, "own_')  # a kill mid-line
    tail = read_round_tail(rounds, 400)
    assert tail and tail[-1].round_total == 49 and len(tail) < 50


def test_metrics_lines_need_time_and_env_steps_and_gather_losses() -> None:
    line = MetricsLine.model_validate(
        {"time": 1, "env_steps": 120.0, "updates": 5, "critic_loss": 1.5, "qf9_loss": 2, "actor_loss": None}
    )
    assert line.env_steps == 120 and line.time == 1.0 and line.actor_loss is None
    assert line.losses() == {"critic_loss": 1.5, "qf9_loss": 2.0}
    lines, bad = parse_rows(
        MetricsLine.model_validate, [{"time": 2}, {"env_steps": 1}, {"time": True, "env_steps": 1}]
    )
    assert lines == [] and bad == 3


def test_campaign_events_need_an_event_and_a_time(tmp_path: Path) -> None:
    log = tmp_path / "campaign_log.jsonl"
    jsonl.append(log, {"event": "league_draw", "time": 1.0, "chunk": 2, "pool": {"A": 0.25, "B": 0.75}})
    jsonl.append(
        log, {"event": "snapshot", "time": 2.0, "chunk": 2, "name": "SacSnap2", "pool": ["SacSnap2"]}
    )
    jsonl.append(log, {"event": 3, "time": 1.0})
    jsonl.append(log, {"event": "start", "time": "soon"})
    log.open("a").write('{"event": "chunk_done", "chu')
    draw, snapshot = read_events(log)
    assert draw.probabilities() == {"A": 0.25, "B": 0.75} and draw.chunk == 2
    assert snapshot.name == "SacSnap2" and snapshot.probabilities() is None
    assert snapshot.model_extra == {"pool": ["SacSnap2"]}
    older = CampaignEvent.model_validate({"event": "league_draw", "time": 1, "probabilities": {"A": 1}})
    assert older.probabilities() == {"A": 1.0}
    assert (
        CampaignEvent.model_validate({"event": "league_draw", "time": 1, "pool": {"A": -1}}).probabilities()
        is None
    )


def test_eval_log_keeps_the_last_line_per_opponent_and_chunk(tmp_path: Path) -> None:
    def rec(opponent: str, chunk: int, share: float, time: float = 0.0) -> EvalRecord:
        return EvalRecord(
            opponent=opponent, rounds=10, wins=5, win_rate=0.5, score_share=share, chunk=chunk, time=time
        )

    path = tmp_path / "eval_log.jsonl"
    append_eval(path, rec("A", 2, 0.1))
    append_eval(path, rec("A", 2, 0.3))  # the rerun after a crash mid-eval
    append_eval(path, rec("B", 2, 0.5))
    path.open("a").write("not json\n")
    assert [(r.opponent, r.score_share) for r in read_eval_log(path)] == [("A", 0.3), ("B", 0.5)]
    line = json.loads(path.read_text().splitlines()[0])
    assert line == rec("A", 2, 0.1).model_dump() and line["bullet_damage"] == 0.0
    nan = {**rec("C", 1, 0.2).model_dump(), "win_rate": float("nan")}
    records, bad = eval_history([nan, {"opponent": "C"}, {**rec("C", 1, 0.2).model_dump(), "new": 1}])
    assert bad == 2 and [r.opponent for r in records] == ["C"]
    with pytest.raises(ValueError):
        append_eval(path, rec("D", 1, float("inf")))


def test_best_score_is_json_and_an_older_runs_text_mirror_still_reads(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path)
    assert read_best_score(paths) is None
    paths.legacy_best_score.write_text(
        "0.770000 campaign-eval-composite:win_rate:ma3 chunk 2 2026-01-01T00:00:00Z\n"
    )
    assert read_best_score(paths) == BestScore(
        score=0.77, kind="campaign-eval-composite:win_rate:ma3", chunk=2, time="2026-01-01T00:00:00Z"
    )
    for text, expected in [
        ("0.5", BestScore(score=0.5)),
        ("0.5 kind chunk x", BestScore(score=0.5, kind="kind")),
        ("nan kind chunk 2", None),
        ("best: none", None),
        ("", None),
    ]:
        paths.legacy_best_score.write_text(text)
        assert read_best_score(paths) == expected, text
    best = BestScore(score=0.8125, kind="k", chunk=3, time="2026-02-03T04:05:06Z")
    write_best_score(paths, best)
    assert json.loads(paths.best_score.read_text()) == best.model_dump()
    assert not paths.legacy_best_score.exists()  # the JSON mirror speaks for the run now
    assert read_best_score(paths) == best
    paths.best_score.write_text('{"score": "high"}')
    assert read_best_score(paths) is None
    paths.best_score.unlink()
    paths.best_score.mkdir()
    with pytest.raises(UserError, match="cannot read"):
        read_best_score(paths)


def test_league_lines_are_pool_or_snapshot_lines() -> None:
    pool = LEAGUE_LINE.validate_python({"event": "pool", "env_steps": 10, "pool": {"A": 0.5}, "games": {}})
    snap = LEAGUE_LINE.validate_python(
        {"event": "snapshot", "env_steps": 20, "name": "FastSnap20", "pool": []}
    )
    assert isinstance(pool, LeaguePoolLine) and pool.pool == {"A": 0.5}
    assert isinstance(snap, LeagueSnapshotLine) and snap.env_steps == 20
    rows: list[dict[str, Any]] = [
        {"event": "pool", "env_steps": 10, "pool": {}},
        {"event": "pool", "pool": {"A": 1}},
        {"event": "x"},
    ]
    assert parse_rows(LEAGUE_LINE.validate_python, rows) == ([], 3)
