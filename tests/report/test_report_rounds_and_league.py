"""`sacbot report`'s per-round score share, per-opponent training win rate and league mix: the pure series
on small real lines, and the command on a bare `sacbot play` weights folder and on a league campaign."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from sacbot import jsonl as jsonl_file
from sacbot.campaign.config import SNAPSHOT_PREFIX
from sacbot.env.league import FAST_SNAPSHOT_PREFIX, FastLeague
from sacbot.opponents.sampling import LeagueConfig
from sacbot.records import CampaignEvent
from sacbot.report.data import (
    FAST_LEAGUE,
    PLAY_METRICS,
    PLAY_ROUNDS,
    PRETRAIN_METRICS,
    PRETRAIN_ROUNDS,
    SNAPSHOT_PREFIXES,
    WEIGHTS_FOLDER_FILES,
    active_clock,
    parse_run,
)
from sacbot.report.league_mix import campaign_league_mix, fast_league_mix
from sacbot.report.series import training_win_rate_by_opponent
from sacbot.report.shares import ShareRound, moving_average, share_blocks, share_facts, share_rounds
from sacbot.rundir import LEAGUE_LOG


def png_size(path: Path) -> tuple[int, int]:
    with Image.open(path) as image:
        return image.size


def jsonl(*rows: Any) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


# Rounds 1-50: 10:90 and 60:140 in turn (shares 0.1, 0.3); 51-100: 40:60 and 120:80 (0.4, 0.6);
# 101-110: 90:10 (0.9).
def scripted_scores() -> list[tuple[float, float]]:
    first = [(10.0, 90.0) if i % 2 else (60.0, 140.0) for i in range(1, 51)]
    second = [(40.0, 60.0) if i % 2 else (120.0, 80.0) for i in range(51, 101)]
    return first + second + [(90.0, 10.0)] * 10


# -- pure parts ----------------------------------------------------------------------------------------------


def test_the_report_spells_the_trainers_names() -> None:
    assert SNAPSHOT_PREFIXES == (SNAPSHOT_PREFIX, FAST_SNAPSHOT_PREFIX)
    assert FAST_LEAGUE == f"pretrain/{LEAGUE_LOG}"
    assert WEIGHTS_FOLDER_FILES["league.jsonl"] == FAST_LEAGUE


def test_per_round_shares_from_play_and_train_fast_lines() -> None:
    text = jsonl(
        {"time": 1.0, "opponent": "Walls", "outcome": "won", "own_score": 75.0, "enemy_score": 25.0},
        {"time": 2.0, "opponent": "Walls", "outcome": "lost", "own_score": 0.0, "enemy_score": 0.0},
        {"time": 3.0, "opponent": "SacSnap4", "outcome": "lost", "own_score": -5.0, "enemy_score": 20.0},
        {"time": 4.0, "opponent": "Crazy", "outcome": "won", "score": 120, "opponent_score": 40,
         "written_by": "sacbot train-fast"},
        {"time": 5.0, "opponent": "Crazy", "outcome": "truncated", "turns": 3000},  # no scores: left out
        {"time": 6.0, "outcome": "lost", "own_score": 10.0, "enemy_score": 30.0},  # SACBOT_OPPONENT unset
    )  # fmt: skip
    rounds = share_rounds(parse_run({PLAY_ROUNDS: text}).rounds)
    assert [r.index for r in rounds] == [1, 2, 3, 4, 5]
    assert [r.share for r in rounds] == [0.75, 0.5, 0.0, 0.75, 0.25]  # 0:0 is 0.5; a negative score counts 0
    assert [r.opponent for r in rounds] == [
        "Walls", "Walls", "SacSnap* (own snapshots)", "Crazy", "(opponent not set)"
    ]  # fmt: skip
    assert [r.won for r in rounds] == [True, False, False, True, False]


def test_moving_average_is_over_what_there_is_until_the_window_is_full() -> None:
    assert moving_average([1.0, 0.0, 0.0, 1.0, 1.0], 3) == pytest.approx([1.0, 0.5, 1 / 3, 1 / 3, 2 / 3])


def test_fifty_round_blocks_and_first_against_last() -> None:
    rounds = [
        ShareRound(i, "Target", own, enemy, own > enemy)
        for i, (own, enemy) in enumerate(scripted_scores(), 1)
    ]
    blocks = share_blocks(rounds)
    assert [(b.first, b.last, b.rounds, b.wins) for b in blocks] == [
        (1, 50, 50, 0),
        (51, 100, 50, 25),
        (101, 110, 10, 10),
    ]
    assert [round(b.mean_share, 6) for b in blocks] == [0.2, 0.5, 0.9]
    # Pooled: sum(own) / sum(own + enemy), the bigger rounds weighing more.
    assert blocks[0].pooled_share == pytest.approx((25 * 10 + 25 * 60) / (25 * 100 + 25 * 200))
    assert blocks[1].pooled_share == pytest.approx((25 * 40 + 25 * 120) / (25 * 100 + 25 * 200))
    facts = dict(share_facts(rounds))
    assert facts["rounds"] == "110" and facts["wins"] == "35 (31.8%)"
    assert facts["mean score share, rounds 1-50"] == "0.200"
    last = (20 * 0.4 + 20 * 0.6 + 10 * 0.9) / 50  # rounds 61-110
    assert facts["mean score share, rounds 61-110"] == f"{last:.3f}"
    assert facts["change, last 50 minus first 50"] == f"{last - 0.2:+.3f}"
    short = dict(share_facts(rounds[:30]))
    assert "mean score share, rounds 1-30" in short and not any(k.startswith("change") for k in short)


def test_training_win_rate_per_opponent_groups_snapshots_and_waits_for_ten_rounds() -> None:
    pre = [
        {"time": float(i), "opponent": "SpinBot", "outcome": "won" if i >= 20 else "lost"} for i in range(60)
    ]
    pre += [
        {"time": 100.0 + i, "opponent": f"FastSnap{1000 * (1 + i % 3)}", "outcome": "won"} for i in range(12)
    ]
    play = [{"time": 200.0 + i, "opponent": "Walls", "outcome": "lost"} for i in range(9)]  # too few
    texts = {
        PRETRAIN_ROUNDS: jsonl(*pre),
        PLAY_ROUNDS: jsonl(*play),
        PRETRAIN_METRICS: jsonl({"time": 0.0, "env_steps": 0}, {"time": 120.0, "env_steps": 12_000}),
    }
    data = parse_run(texts)
    series = training_win_rate_by_opponent(data, active_clock(data), window=50, min_rounds=10)
    assert list(series) == ["SpinBot", "FastSnap* (own snapshots)"]
    spin = series["SpinBot"]
    assert len(spin) == 60 - 9
    assert spin[0].value == 0.0 and spin[0].env_steps == 900  # its 10th round ends at t = 9 of 0..120 s
    assert spin[10].value == pytest.approx(0.0)  # 20 rounds: all lost
    assert spin[-1].value == pytest.approx(40 / 50)  # its last 50: rounds 10-59, 40 won
    assert [p.value for p in series["FastSnap* (own snapshots)"]] == [1.0] * 3


def test_league_mix_from_campaign_draws_and_fast_pool_lines() -> None:
    logged = [
        {"event": "start", "time": 1.0},
        {"event": "league_draw", "time": 2.0, "chunk": 1, "opponent": "Walls",
         "pool": {"SpinBot": 0.5, "Walls": 0.5}},
        {"event": "snapshot", "time": 3.0, "chunk": 1, "name": "SacSnap1", "pool": ["SacSnap1"]},
        {"event": "league_draw", "time": 4.0, "chunk": 2, "opponent": "SacSnap1",
         "probabilities": {"SpinBot": 0.2, "Walls": 0.2, "SacSnap1": 0.6}},
        # a resumed chunk 2 logs its draw again: the first is the one the chunk met
        {"event": "league_draw", "time": 5.0, "chunk": 2, "opponent": "SacSnap1", "pool": {"SpinBot": 1.0}},
        {"event": "league_draw", "time": 6.0, "chunk": 3, "opponent": "Walls", "pool": ["not", "a", "table"]},
    ]  # fmt: skip
    mix = campaign_league_mix([CampaignEvent.model_validate(e) for e in logged])
    assert mix is not None and mix.x_label == "chunk"
    assert mix.xs == [1.0, 2.0]
    assert mix.shares == {
        "SpinBot": [0.5, 0.2], "Walls": [0.5, 0.2], "SacSnap* (own snapshots)": [0.0, 0.6]
    }  # fmt: skip
    assert mix.drawn == [(1.0, "Walls"), (2.0, "SacSnap* (own snapshots)")]
    assert mix.snapshots == [1.0]
    assert campaign_league_mix([CampaignEvent(event="chunk_done", time=1.0, chunk=1)]) is None

    text = jsonl(
        {"event": "pool", "env_steps": 20_000, "pool": {"SpinBot": 0.25, "Crazy": 0.75}},
        {"event": "snapshot", "env_steps": 20_000, "name": "FastSnap20000"},
        {
            "event": "pool",
            "env_steps": 40_000,
            "pool": {"SpinBot": 0.2, "Crazy": 0.3, "FastSnap20000": 0.5},
        },
    )
    fast = fast_league_mix(parse_run({FAST_LEAGUE: text}).fast_league)
    assert fast is not None and fast.xs == [20_000.0, 40_000.0] and fast.snapshots == [20_000.0]
    assert fast.shares["FastSnap* (own snapshots)"] == [0.0, 0.5] and fast.drawn == []


def test_league_lines_without_a_pool_are_counted_malformed() -> None:
    texts = {
        PLAY_METRICS: jsonl({"time": 1.0, "env_steps": 10}),
        FAST_LEAGUE: jsonl(
            {"event": "pool", "env_steps": 5}, {"event": "pool", "env_steps": 6, "pool": {"A": 1}}
        ),
    }
    data = parse_run(texts)
    assert len(data.fast_league) == 1 and data.malformed == {FAST_LEAGUE: 1}


# -- the command ---------------------------------------------------------------------------------------------


def test_report_of_a_bare_play_weights_folder(
    tmp_path: Path,
    play_game: Callable[..., int],
    sacbot: Callable[..., subprocess.CompletedProcess[str]],
    assert_png: Callable[[Path], None],
    section: Callable[[str, str], str],
    table_row: Callable[[str, str], list[str]],
) -> None:
    """`SACBOT_WEIGHTS_DIR=DIR sacbot play` against one opponent, two games (60 + 50 rounds): DIR holds
    rounds.jsonl and training_metrics.jsonl, no campaign log."""
    weights = tmp_path / "weights"
    scores = scripted_scores()
    rng = np.random.default_rng(3)
    play_game(weights, "Target", scores[:60], rng)
    play_game(weights, "Target", scores[60:], rng)
    assert not (weights / "campaign_log.jsonl").exists()
    done = sacbot("report", str(weights))
    assert done.returncode == 0, done.stderr
    out = weights / "report"
    assert_png(out / "score_share_per_round.png")
    assert_png(out / "training_win_rate.png")  # 110 rounds: the last-50 curve has 61 points
    assert not (out / "league_mix.png").exists()
    assert not (out / "win_rate_vs_env_steps.png").exists()
    assert "eval" not in done.stderr  # no evals is this folder's nature, not a thing to point out
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# Weights folder report: weights (sacbot play)")
    shares = section(text, "Score share per round (real-time rounds)")
    assert table_row(shares, "rounds") == ["rounds", "110"]
    assert table_row(shares, "wins") == ["wins", "35 (31.8%)"]
    assert table_row(shares, "opponents") == ["opponents", "Target (110)"]
    assert table_row(shares, "mean score share, rounds 1-50")[1] == "0.200"
    assert table_row(shares, "mean score share, rounds 61-110")[1] == "0.580"
    assert table_row(shares, "change, last 50 minus first 50")[1] == "+0.380"
    assert table_row(shares, "1-50") == ["1-50", "0", "0.0%", "0.200", f"{1750 / 7500:.3f}", "Target"]
    assert table_row(shares, "51-100") == ["51-100", "25", "50.0%", "0.500", f"{4000 / 7500:.3f}", "Target"]
    assert table_row(shares, "101-110 (10 rounds)") == [
        "101-110 (10 rounds)",
        "10",
        "100.0%",
        "0.900",
        "0.900",
        "Target",
    ]
    assert "Per opponent" not in shares  # one opponent: the blocks say it all
    assert table_row(text, "real-time rounds logged by the bot")[1] == "110"
    assert table_row(text, "bot round counter")[1] == "110"
    assert "## Final eval" not in text and "league" not in text.lower()
    assert "](score_share_per_round.png)" in text


def test_report_of_a_league_campaign_with_a_fast_phase(
    tmp_path: Path,
    build_league_run: Callable[..., Path],
    sacbot: Callable[..., subprocess.CompletedProcess[str]],
    assert_png: Callable[[Path], None],
    table_row: Callable[[str, str], list[str]],
) -> None:
    run = build_league_run(tmp_path / "league-run")
    events = [json.loads(line) for line in (run / "campaign_log.jsonl").read_text().splitlines()]
    draws = [e for e in events if e["event"] == "league_draw"]
    assert [e["chunk"] for e in draws] == [1, 2, 3, 4]
    done = sacbot("report", str(run), "--out", str(tmp_path / "campaign-only"))
    assert done.returncode == 0, done.stderr
    assert_png(tmp_path / "campaign-only" / "league_mix.png")
    text = (tmp_path / "campaign-only" / "report.md").read_text(encoding="utf-8")
    counts: dict[str, int] = {}
    for e in draws:
        counts[e["opponent"]] = counts.get(e["opponent"], 0) + 1
    facts = table_row(text, "league draws (chunks)")[1]
    assert facts.startswith("4: ") and all(f"{name} {k}x" in facts for name, k in counts.items())
    assert "](league_mix.png)" in text
    one_panel = png_size(tmp_path / "campaign-only" / "league_mix.png")

    # A fast phase with a league: train-fast's own pool lines (FastLeague) under pretrain/.
    league = FastLeague([("SpinBot", 1.0), ("Crazy", 2.0)], LeagueConfig(sampling="pfsp"), run / "pretrain")
    for steps in (20_000, 40_000, 60_000):
        for _ in range(8):
            league.record({"opponent": "SpinBot", "outcome": "won"})
        jsonl_file.append(run / FAST_LEAGUE, {"time": 1.0, **league.pool_line(steps)})
    done = sacbot("report", str(run), "--out", str(tmp_path / "both"))
    assert done.returncode == 0, done.stderr
    assert_png(tmp_path / "both" / "league_mix.png")
    assert png_size(tmp_path / "both" / "league_mix.png")[1] > one_panel[1]  # a second panel: the fast phase
    text = (tmp_path / "both" / "report.md").read_text(encoding="utf-8")
    assert table_row(text, "fast league pool lines (train-fast saves)")[1] == "3"
