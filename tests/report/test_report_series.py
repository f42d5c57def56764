"""The report's pure parts: parsing, the active clock, env-step placement, updates/s, composite, tables."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sacbot.records import CampaignEvent, EvalRecord, MetricsLine
from sacbot.report.data import (
    EVAL_LOG,
    PLAY_METRICS,
    PLAY_ROUNDS,
    PRETRAIN_METRICS,
    PRETRAIN_ROUNDS,
    BestInfo,
    MetricPoint,
    RunData,
    active_clock,
    env_steps_at,
    metric_points,
    parse_run,
)
from sacbot.report.facts import latest_evals
from sacbot.report.series import composite_series, loss_series, training_win_rate_series, updates_per_s_series
from sacbot.report.summary import eval_table


def jsonl(*rows: Any) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


def metrics_line(t: float, steps: int, updates: int | None, critic: float | None = 1.0) -> dict[str, Any]:
    return {"time": t, "env_steps": steps, "updates": updates, "critic_loss": critic, "alpha": 0.1}


def points(*rows: dict[str, Any]) -> list[MetricPoint]:
    return metric_points([MetricsLine.model_validate(row) for row in rows], "play")


def ev(
    opponent: str, rounds: int, wins: int, win_rate: float, share: float, chunk: int, t: float
) -> EvalRecord:
    return EvalRecord(
        opponent=opponent, rounds=rounds, wins=wins, win_rate=win_rate, score_share=share, chunk=chunk, time=t
    )


def test_metrics_need_time_and_env_steps_and_treat_nan_as_missing() -> None:
    text = jsonl({"time": 1, "env_steps": 5, "critic_loss": float("nan")}, {"time": 2}, "[1]")
    data = parse_run({PLAY_METRICS: text})
    assert data.malformed == {PLAY_METRICS: 2} and len(data.metrics) == 1
    assert data.metrics[0].losses["critic_loss"] is None and data.metrics[0].updates is None


def test_eval_lines_keep_the_last_per_opponent_and_chunk() -> None:
    first = ev("Walls", 10, 2, 0.2, 0.3, 1, 100.0).model_dump()
    rerun = ev("Walls", 10, 6, 0.6, 0.5, 1, 110.0).model_dump()
    data = parse_run({EVAL_LOG: jsonl(first, rerun, {"opponent": "Walls"}, {**first, "time": float("inf")})})
    assert data.malformed == {EVAL_LOG: 2} and [r.wins for r in data.evals] == [6]


def test_active_clock_leaves_out_the_idle_gap_between_sessions() -> None:
    events = [
        CampaignEvent(event="start", time=1000.0),
        CampaignEvent(event="chunk_done", time=1060.0),
        CampaignEvent(event="start", time=5000.0),  # resumed an hour later
        CampaignEvent(event="chunk_done", time=5030.0),
    ]
    data = RunData(events=events)
    clock = active_clock(data)
    assert clock(1000.0) == 0.0 and clock(1060.0) == 60.0
    assert clock(5000.0) == 60.0 and clock(5030.0) == 90.0
    assert clock.total_s == 90.0 and clock.span_s == 4030.0


def test_env_steps_at_takes_the_last_line_written_before() -> None:
    placed = points(metrics_line(10, 100, 1), metrics_line(20, 200, 2))
    assert env_steps_at(placed, 5) == 0
    assert env_steps_at(placed, 15) == 100
    assert env_steps_at(placed, 25) == 200
    assert env_steps_at([], 25) is None


def test_updates_per_s_skips_intervals_across_a_new_process() -> None:
    lines = points(
        metrics_line(10, 100, 0),
        metrics_line(12, 200, 100),
        metrics_line(20, 300, 150),
        metrics_line(21, 400, 170),
    )
    # A chunk attempt started at t=15: the 12 -> 20 interval holds a boot and is left out.
    assert updates_per_s_series(lines, [15.0]) == [(200, 50.0), (400, 20.0)]
    backwards = points(metrics_line(1, 1, 50), metrics_line(2, 2, 10))
    assert updates_per_s_series(backwards, []) == []


def test_composite_comes_from_the_log_else_is_recomputed() -> None:
    evals = [
        ev("A", 10, 5, 0.5, 0.4, 1, 10.0),
        ev("B", 10, 1, 0.1, 0.2, 1, 11.0),
        ev("A", 10, 9, 0.9, 0.8, 2, 20.0),
        ev("B", 10, 3, 0.3, 0.4, 2, 21.0),
    ]
    data = RunData(evals=evals)
    points, label = composite_series(data, active_clock(data))
    assert [round(p.value, 6) for p in points] == [0.3, 0.45]  # (0.4+0.2)/2, ((0.4+0.8)/2 + (0.2+0.4)/2)/2
    assert "recomputed" in label
    logged = RunData(
        evals=evals,
        events=[CampaignEvent(event="eval_done", time=21.5, chunk=2, composite=0.77)],
        best=BestInfo(score=0.77, kind="campaign-eval-composite:win_rate:ma3", chunk=2),
    )
    points, label = composite_series(logged, active_clock(logged))
    assert [(p.value, p.chunk) for p in points] == [(0.77, 2)] and label == "composite (win_rate, ma3)"


def test_final_table_takes_each_opponents_latest_eval_and_sums() -> None:
    evals = [
        ev("A", 10, 5, 0.5, 0.4, 1, 10.0),
        ev("A", 20, 18, 0.9, 0.7, 2, 20.0),
        ev("B", 20, 12, 0.6, 0.5, 2, 21.0),
    ]
    latest = latest_evals(evals)
    assert [(r.opponent, r.chunk) for r in latest] == [("A", 2), ("B", 2)]
    lines = eval_table(latest)
    assert "| A | 20 | 18 | 90.0% | 0.700 | 2 |" in lines
    assert "| **all** | 40 | 30 | 75.0% | 0.600 | |" in lines


def test_training_win_rate_runs_over_pretraining_and_play_rounds_in_time_order() -> None:
    pre_rounds = [{"time": 10.0 + i, "outcome": "won" if i >= 60 else "lost"} for i in range(100)]
    play_rounds = [{"time": 200.0 + i, "outcome": "won"} for i in range(10)]
    texts = {
        PRETRAIN_ROUNDS: jsonl(*pre_rounds),
        PLAY_ROUNDS: jsonl(*play_rounds, {"time": 300.0}),  # a line without an outcome is left out
        PRETRAIN_METRICS: jsonl(metrics_line(0.0, 0, 0), metrics_line(110.0, 20_000, 500)),
    }
    data = parse_run(texts)
    assert len(data.training_outcomes) == 110
    series = training_win_rate_series(data, active_clock(data), window=50)
    assert len(series) == 110 - 49
    assert series[0].value == pytest.approx(0.0)  # rounds 0-49: all lost
    assert series[60].value == pytest.approx(1.0)  # the last 50: 40 pretraining wins, then 10 in play
    # Env steps between two metrics lines are interpolated: round 49 ends at t = 59 of 0..110 s.
    assert series[0].env_steps == round(59 / 110 * 20_000)


def test_a_zero_opt_in_loss_is_no_curve_but_a_real_one_is() -> None:
    off = [MetricPoint(1.0, 10, "play", 1, {"critic_loss": 1.0, "kickstart_loss": 0.0})]
    on = [MetricPoint(1.0, 10, "play", 1, {"critic_loss": 1.0, "kickstart_loss": 0.3})]
    assert loss_series(off)["kickstart_loss"] == [] and loss_series(off)["critic_loss"] == [(10, 1.0)]
    assert loss_series(on)["kickstart_loss"] == [(10, 0.3)]
    both = [MetricPoint(1.0, 10, "play", 1, {"kickstart_loss": 0.3, "self_imitation_loss": 0.0})]
    assert loss_series(both)["self_imitation_loss"] == []
    assert loss_series(both)["kickstart_loss"] == [(10, 0.3)]
    imitating = [MetricPoint(1.0, 10, "play", 1, {"kickstart_loss": 0.0, "self_imitation_loss": 0.2})]
    assert loss_series(imitating)["self_imitation_loss"] == [(10, 0.2)]


def test_the_losses_figure_draws_a_panel_for_every_term() -> None:
    """Seven series (the three SAC losses and four opt-in terms), with stages marked: seven panels, each with
    its own colour drawn (a figure with more terms than colours once left its last panels empty)."""
    import io

    from matplotlib.colors import to_rgb
    from PIL import Image

    from sacbot.report.data import LOSS_KEYS, Phases
    from sacbot.report.plots import LOSS_COLORS, losses

    series = {key: [(1000 * i, 1.0 + (i % 3)) for i in range(1, 40)] for key in LOSS_KEYS}
    png = losses(series, Phases(end=30_000, stages=(("surf", 10_000), ("wave", 20_000))))
    with Image.open(io.BytesIO(png)) as image:
        pixels = image.convert("RGB")
        width, height = pixels.size
        band = height / len(LOSS_KEYS)
        for i in range(len(LOSS_KEYS)):
            want = tuple(round(255 * c) for c in to_rgb(LOSS_COLORS[i]))
            box = pixels.crop((0, int(i * band), width, int((i + 1) * band)))
            counted = box.getcolors(maxcolors=width * int(band) + 1)
            assert counted is not None
            colours = {c for _, c in counted}
            assert want in colours, f"panel {i + 1} ({LOSS_KEYS[i]}) shows no {LOSS_COLORS[i]} curve"
