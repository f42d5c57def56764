"""`sacbot report` end to end: a real campaign run folder in, valid PNGs and a right Markdown table out."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sacbot import jsonl
from sacbot.records import EvalRecord, append_eval

from .report_support import EVAL_OPPONENTS, EVAL_RESULTS, EVAL_ROUNDS

CURVES = (
    "win_rate_vs_env_steps.png",
    "win_rate_vs_wall_time.png",
    "losses.png",
    "alpha.png",
    "updates_per_s.png",
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, build_run: Callable[[Path], Path]) -> Path:
    return build_run(tmp_path_factory.mktemp("run") / "standard")


def test_report_of_a_campaign_run(
    run_dir: Path,
    tmp_path: Path,
    sacbot: Callable[..., subprocess.CompletedProcess[str]],
    assert_png: Callable[[Path], None],
    section: Callable[[str, str], str],
    table_row: Callable[[str, str], list[str]],
) -> None:
    out = tmp_path / "report"
    done = sacbot("report", str(run_dir), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "malformed" not in done.stderr
    for name in CURVES:
        assert_png(out / name)
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "## Final eval (chunk 3)" in text
    final = EVAL_RESULTS[3]
    for name in EVAL_OPPONENTS:
        wins, share = final[name]
        assert table_row(section(text, "Final eval"), name) == [
            name, str(EVAL_ROUNDS), str(wins), f"{wins / EVAL_ROUNDS:.1%}", f"{share:.3f}", "3"
        ]  # fmt: skip
    all_wins = sum(w for w, _ in final.values())
    mean_share = sum(s for _, s in final.values()) / len(final)
    total = 2 * EVAL_ROUNDS
    assert table_row(text, "**all**")[:5] == [
        "**all**", str(total), str(all_wins), f"{all_wins / total:.1%}", f"{mean_share:.3f}"
    ]  # fmt: skip
    assert table_row(text, "chunks completed")[1] == "3 of 3"
    assert table_row(text, "retried chunk/eval attempts")[1] == "1"  # chunk 2's first attempt crashed
    assert table_row(text, "finished")[1] == "yes"
    assert table_row(text, "skipped turns (all real-time rounds)")[1] == "0"
    # The real-time bot logged 10 rounds: 3 chunks of 3, and the round the crashed attempt saved.
    assert table_row(text, "real-time rounds logged by the bot")[1] == "10"
    last_metrics = json.loads((run_dir / "weights" / "training_metrics.jsonl").read_text().splitlines()[-1])
    assert table_row(text, "env steps")[1] == f"{last_metrics['env_steps']:,}"
    best = table_row(text, "best composite")[1]
    assert best.startswith(f"{(0.81 + 0.66 + 0.41 + 0.30 + 0.66 + 0.52) / 6:.4f} at chunk 3")
    for name in CURVES:
        assert f"]({name})" in text
    # The 10 real-time rounds (70:30 and 40:60 in turn, from each game's first round) have their curve and
    # their facts; the run has no league, so no league plot and no word of one.
    assert_png(out / "score_share_per_round.png")
    assert "## Score share per round (real-time rounds)" in text
    assert table_row(text, "rounds") == ["rounds", "10"]
    # Each game opens 70:30 then 40:60, 70:30: chunks 1-3 and the crashed attempt's one round.
    shares = [0.7, 0.4, 0.7] + [0.7] + [0.7, 0.4, 0.7] * 2
    assert table_row(text, "mean score share, rounds 1-10")[1] == f"{sum(shares) / 10:.3f}"
    assert not (out / "league_mix.png").exists()


def test_report_reads_an_older_runs_text_best_score(
    run_dir: Path,
    tmp_path: Path,
    sacbot: Callable[..., subprocess.CompletedProcess[str]],
    table_row: Callable[[str, str], list[str]],
) -> None:
    run = tmp_path / "older"
    shutil.copytree(run_dir, run)
    (run / "best_score.json").unlink()
    (run / "best_score").write_text(
        "0.123456 campaign-eval-composite:score_share:ma5 chunk 3 2026-01-01T00:00:00Z\n"
    )
    done = sacbot("report", str(run), "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert (
        table_row(text, "best composite")[1] == "0.1235 at chunk 3 (campaign-eval-composite:score_share:ma5)"
    )
    assert "league" not in text.lower() and "league" not in done.stderr.lower()


def test_default_out_and_tolerance_of_malformed_lines_and_missing_fields(
    tmp_path: Path,
    sacbot: Callable[..., subprocess.CompletedProcess[str]],
    assert_png: Callable[[Path], None],
    table_row: Callable[[str, str], list[str]],
) -> None:
    """No campaign log, a torn eval line, a metrics line without env steps, passes without updates (null
    losses): the report still comes out, with the composite recomputed and the skipped lines counted."""
    run = tmp_path / "run"
    weights = run / "weights"
    weights.mkdir(parents=True)
    t0 = 1_800_000_000.0
    for i in range(6):
        warm = i >= 2  # warm-up passes ran no update: the trainer writes nulls for the losses and alpha
        line: dict[str, Any] = {"time": t0 + 10 * i, "epoch": i + 1, "env_steps": 500 * (i + 1)}
        line["updates"] = 100 * i if warm else 0
        losses = (
            {"critic_loss": 1 / i, "actor_loss": -i, "alpha_loss": 0.01, "alpha": 0.2 / i} if warm else {}
        )
        for key in ("critic_loss", "actor_loss", "alpha_loss", "alpha"):
            line[key] = losses.get(key)
        # Self-imitation on, the teacher's term off (a constant 0): the panel draws the one, not the other.
        line["kickstart_loss"], line["self_imitation_loss"] = (0.0, 0.05 * i) if warm else (None, None)
        jsonl.append(weights / "training_metrics.jsonl", line)
    with (weights / "training_metrics.jsonl").open("a") as fh:
        fh.write(json.dumps({"time": t0 + 70, "critic_loss": 0.1}) + "\n")  # no env_steps: malformed
    for chunk, (wins, share) in ((1, (3, 0.4)), (2, (7, 0.6))):
        rec = EvalRecord(
            opponent="Corners", rounds=10, wins=wins, win_rate=wins / 10, score_share=share, chunk=chunk,
            time=t0 + 25 * chunk,
        )  # fmt: skip
        append_eval(run / "eval_log.jsonl", rec)
    with (run / "eval_log.jsonl").open("a") as fh:
        fh.write('{"opponent": "Corners", "rounds": 10, "wi')  # torn by a kill
    done = sacbot("report", str(run))
    assert done.returncode == 0, done.stderr
    assert "skipped 2 malformed line(s)" in done.stderr
    out = run / "report"
    for name in CURVES:
        assert_png(out / name)
    text = (out / "report.md").read_text(encoding="utf-8")
    assert table_row(text, "Corners") == ["Corners", "10", "7", "70.0%", "0.600", "2"]
    assert "Malformed lines skipped: eval_log.jsonl: 1, weights/training_metrics.jsonl: 1." in text
    assert "**all**" not in text  # one opponent: no total row
    assert "Critic, actor and alpha losses, with the self-imitation term" in text
    assert "teacher's term" not in text


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "case",
    ["missing", "a file", "empty folder", "empty files", "only garbage", "out is a file"],
)
def test_bad_input_is_one_line_and_a_nonzero_exit(
    tmp_path: Path, case: str, sacbot: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    run = tmp_path / "run"
    args: list[str] = []
    if case == "a file":
        write(run, "not a folder")
    elif case == "empty folder":
        run.mkdir()
    elif case == "empty files":
        write(run / "campaign_log.jsonl", "")
        write(run / "eval_log.jsonl", "\n")
    elif case == "only garbage":
        write(run / "eval_log.jsonl", "\x00\x01garbage\n[1, 2]\n")
        write(run / "weights" / "training_metrics.jsonl", '{"critic_loss": 1.0}\n')
    elif case == "out is a file":
        rec = EvalRecord(
            opponent="Walls", rounds=10, wins=5, win_rate=0.5, score_share=0.5, chunk=1, time=1_800_000_000.0
        )
        append_eval(run / "eval_log.jsonl", rec)
        target = write(tmp_path / "taken", "keep me")
        args = ["--out", str(target)]
    done = sacbot("report", str(run), *args)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sacbot: error:"), done.stderr
    assert "Traceback" not in done.stderr
    if case == "only garbage":
        assert "no usable data" in lines[0] and "3 malformed" in lines[0]
    if case == "out is a file":
        assert (tmp_path / "taken").read_text() == "keep me"  # nothing on disk is lost
    assert not (run / "report").exists()
