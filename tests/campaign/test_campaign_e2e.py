"""Campaigns end to end: the real `sacbot train-campaign` / `sacbot eval` processes, the embedded arena,
the real `bots/SacBot` and a real classic opponent, with faults injected through the real detection and retry
path.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sacbot.checkpoint import load_checkpoint, read_meta
from sacbot.records import read_round_counter
from sacbot.report.writer import load_run

REPO = Path(__file__).resolve().parents[2]
OPPONENT = "TrackFire"  # stands still and shoots straight: rounds against an untrained bot end quickly


def write_campaign(
    folder: Path,
    budget: int,
    every: int,
    round_timeout: float = 40.0,
    pool: str = f"{OPPONENT} = 1",
    extra_bots: str = "",
) -> Path:
    path = folder / "tiny.toml"
    path.write_text(
        f"""
name = "tiny"
seed = 3
bots_dirs = [{extra_bots}"{REPO / "bots"}"]
[game]
type = "1v1"
setup = {{ arena_width = 400, arena_height = 400, max_inactivity_turns = 150 }}
[chunks]
rounds = 2
budget = {budget}
[opponents]
{pool}
[eval]
every = {every}
rounds = 1
opponents = ["{OPPONENT}"]
[retry]
max_retries = 3
backoff_s = 0.2
[liveness]
boot_timeout_s = 60
round_timeout_s = {round_timeout}
"""
    )
    return path


def campaign(cfg: Path, out: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", "train-campaign", str(cfg), "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def log(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "campaign_log.jsonl").read_text().splitlines()]


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose environment names `text` (SACBOT_CAMPAIGN_RUN=<out>): orphans would show here."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if text.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Two chunks (seed 3 draws the frozen twin, then TrackFire) and one eval, as `sacbot train-campaign`."""
    folder = tmp_path_factory.mktemp("smoke")
    seed = folder / "seed.zip"
    made = subprocess.run([sys.executable, "-m", "sacbot", "checkpoint", "new", str(seed), "--seed", "5"])
    assert made.returncode == 0
    bots = folder / "bots"
    twin = subprocess.run(
        [sys.executable, "-m", "sacbot", "make-twin", "--from", str(seed), "--bots-dir", str(bots)]
    )
    assert twin.returncode == 0
    cfg = write_campaign(
        folder, budget=2, every=2, pool=f"{OPPONENT} = 1\nSacTwin = 1", extra_bots=f'"{bots}", '
    )
    out = folder / "run"
    return out, campaign(cfg, out)


def test_smoke_campaign_end_to_end(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, result = smoke_run
    assert result.returncode == 0, result.stderr[-2000:]
    events = log(out)
    done = [e for e in events if e["event"] == "chunk_done"]
    assert [(e["chunk"], e["opponent"], e["rounds"]) for e in done] == [(1, "SacTwin", 2), (2, OPPONENT, 2)]
    # A frozen twin is an ordinary pool opponent that writes nothing of its own.
    twin = out.parent / "bots" / "SacTwin"
    assert digest(twin / "weights" / "latest.zip") == digest(out.parent / "seed.zip")
    assert not (twin / "weights" / "rounds.jsonl").exists()
    assert events[-1]["event"] == "finished" and events[-1]["completed"] == 2
    progress = [json.loads(line) for line in result.stdout.splitlines()]
    assert any(p["event"] == "round" and p["rounds"] == 2 for p in progress)
    # Training happened and was saved at every round end.
    load_checkpoint(out / "weights" / "latest.zip")
    assert json.loads((out / "weights" / "round_counter.json").read_text())["rounds"] == 4
    # One eval line per eval opponent; the first composite becomes the global best through the gate.
    evals = [json.loads(line) for line in (out / "eval_log.jsonl").read_text().splitlines()]
    assert len(evals) == 1
    assert {"opponent", "rounds", "wins", "win_rate", "score_share", "chunk", "time"} <= set(evals[0])
    assert evals[0]["opponent"] == OPPONENT and evals[0]["rounds"] == 1 and evals[0]["chunk"] == 2
    evals_done = [e for e in events if e["event"] == "eval_done"]
    assert len(evals_done) == 1 and evals_done[0]["promoted"] is True
    meta = read_meta(out / "weights" / "best.zip")
    assert meta is not None and meta.score == pytest.approx(evals[0]["score_share"])
    mirror = json.loads((out / "best_score.json").read_text())
    assert mirror["score"] == meta.score and mirror["kind"] == meta.score_kind and mirror["chunk"] == 2
    assert not processes_mentioning(str(out))

    # Re-running the same command resumes: the budget is done, so nothing is played again.
    again = campaign(out.parent / "tiny.toml", out)
    assert again.returncode == 0, again.stderr[-2000:]
    events = log(out)
    assert [e["event"] for e in events].count("start") == 2
    assert [e["event"] for e in events].count("chunk_start") == 2
    assert events[-1]["event"] == "finished"


def test_eval_command_changes_no_weights(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, _ = smoke_run
    checkpoint = out / "weights" / "latest.zip"
    before = digest(checkpoint)
    result = subprocess.run(
        [sys.executable, "-m", "sacbot", "eval", "--checkpoint", str(checkpoint)]
        + ["--opponents", OPPONENT, "--rounds", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = json.loads(result.stdout)
    assert [r["opponent"] for r in rows] == [OPPONENT]
    assert set(rows[0]) == {"opponent", "rounds", "wins", "win_rate", "score_share"}
    assert rows[0]["rounds"] == 1 and 0.0 <= rows[0]["score_share"] <= 1.0
    assert digest(checkpoint) == before


def test_faults_are_retried_and_the_budget_finishes(tmp_path: Path) -> None:
    # Chunk 1: the server crashes, then the bot freezes (SIGSTOP); chunk 2, the final one: the bot is killed.
    # Every failure is detected by the ordinary checks and retried from `latest`.
    out = tmp_path / "run"
    faults = "server_crash@1.1,hang_bot@1.2,kill_bot@2.1"
    result = campaign(
        write_campaign(tmp_path, budget=2, every=0, round_timeout=20.0),
        out,
        {"SACBOT_CAMPAIGN_FAULTS": faults},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    events = log(out)
    failed = [(e["chunk"], e["attempt"], e["reason"]) for e in events if e["event"] == "chunk_failed"]
    assert [(c, a) for c, a, _ in failed] == [(1, 1), (1, 2), (2, 1)]
    assert "arena" in failed[0][2] or "server" in failed[0][2]
    assert failed[1][2].startswith("hung")
    assert "code -9" in failed[2][2]
    assert [e["event"] for e in events].count("server_restart") == 1
    assert [e["fault"] for e in events if e["event"] == "fault_injected"] == [
        "server_crash",
        "hang_bot",
        "kill_bot",
    ]
    assert [e["chunk"] for e in events if e["event"] == "chunk_done"] == [1, 2]
    assert events[-1]["event"] == "finished" and events[-1]["completed"] == 2
    # Every completed chunk's rounds were saved: 2 chunks x 2 rounds plus the rounds saved before each fault.
    assert json.loads((out / "weights" / "round_counter.json").read_text())["rounds"] >= 4
    load_checkpoint(out / "weights" / "latest.zip")
    assert not processes_mentioning(str(out))


def test_ctrl_c_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # Three chunks: on a loaded machine the wait below can outlast the first chunk's last round, and the
    # Ctrl-C must still find the run under way.
    cfg = write_campaign(tmp_path, budget=3, every=0)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sacbot", "train-campaign", str(cfg), "--out", str(out), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # wait until the first round of the chunk has ended...
        if json.loads(line)["event"] == "round":
            break
    counter, deadline = out / "weights" / "round_counter.json", time.monotonic() + 60
    while (read_round_counter(counter) or 0) < 1 and time.monotonic() < deadline:  # ...and the bot saved it
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in stderr and "re-run the same command" in stderr
    assert log(out)[-1]["event"] == "interrupted"
    load_checkpoint(out / "weights" / "latest.zip")
    deadline = time.monotonic() + 10
    while processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_mentioning(str(out))


def test_pretraining_phase_seeds_the_first_chunk(tmp_path: Path) -> None:
    """A `[pretrain]` table runs the real `sacbot train-fast` (its options passed through) before chunk 1, and
    the chunk's bot starts from what it wrote."""
    cfg = write_campaign(tmp_path, budget=1, every=1)
    cfg.write_text(
        cfg.read_text()
        + f'\n[pretrain]\nsteps = 3000\nenvs = 2\nopponents = ["{OPPONENT}"]\n'
        + "updates_per_step = 0.2\ntorch_threads = 2\nteacher_lead = 1000\n"  # 2,000 warm-up, ~100 updates
        + '[bot]\nradar_mode = "lock"\naim_shaping = 0.5\nclose_shaping = 2.0\nnoise_beta = 1.0\n'
    )
    out = tmp_path / "run"
    result = campaign(cfg, out)
    assert result.returncode == 0, result.stderr[-2000:]
    events = [e["event"] for e in log(out)]
    assert events.index("pretrain_done") < events.index("chunk_start")
    # The pretrained weights were scored before any real-time chunk (eval "chunk 0").
    first_eval = next(e for e in log(out) if e["event"] == "eval_done")
    assert first_eval["chunk"] == 0 and events.index("eval_done") < events.index("chunk_start")
    start = next(e for e in log(out) if e["event"] == "pretrain_start")
    assert "--updates-per-step 0.2" in start["command"] and "--torch-threads 2" in start["command"]
    assert "--teacher-lead 1000" in start["command"]
    pretrained, pre_meta = load_checkpoint(out / "pretrain" / "latest.zip")
    trained, meta = load_checkpoint(out / "weights" / "latest.zip")
    # The [bot] table reached the pretraining and the real-time bot alike; both checkpoints record it.
    assert pre_meta is not None and meta is not None
    for m in (pre_meta, meta):
        assert (m.extra["radar_mode"], m.extra["aim_shaping"], m.extra["close_shaping"]) == ("lock", 0.5, 2.0)
        assert m.extra["noise_beta"] == 1.0
    assert int(pretrained["counters.env_steps"]) >= 3000 and int(pretrained["counters.updates"]) > 0
    assert int(trained["counters.env_steps"]) > int(pretrained["counters.env_steps"])


def test_a_pretraining_already_at_its_budget_is_not_run_again(tmp_path: Path) -> None:
    """Stopped after train-fast finished but before the campaign took its weights: the re-run trains no
    more steps and starts chunk 1 from that checkpoint."""
    cfg = write_campaign(tmp_path, budget=1, every=0)
    cfg.write_text(cfg.read_text() + f'\n[pretrain]\nsteps = 2500\nenvs = 2\nopponents = ["{OPPONENT}"]\n')
    out = tmp_path / "run"
    fast = [sys.executable, "-m", "sacbot", "train-fast", "--opponents", OPPONENT, "--steps", "2500"]
    fast += ["--envs", "2", "--out", str(out / "pretrain"), "--seed", "3"]
    done = subprocess.run(fast, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    before = read_meta(out / "pretrain" / "latest.zip")
    assert before is not None and before.env_steps >= 2500
    result = campaign(cfg, out)
    assert result.returncode == 0, result.stderr[-2000:]
    events = [e["event"] for e in log(out)]
    assert "pretrain_start" not in events and events.index("pretrain_done") < events.index("chunk_start")
    after = read_meta(out / "pretrain" / "latest.zip")
    assert after is not None and after.env_steps == before.env_steps
    trained = read_meta(out / "weights" / "latest.zip")
    assert trained is not None and trained.env_steps > before.env_steps  # chunk 1 went on from it


def test_pretraining_stages_fine_tune_in_order_and_seed_the_first_chunk(tmp_path: Path) -> None:
    """`[[pretrain.stages]]`: each a real `sacbot train-fast` from the phase before's actor over fresh
    critics, with the `[bot]` changes of every stage so far, its steps in `runs` resumed runs; the last
    stage's weights start chunk 1, whose bot takes every stage's changes too."""
    cfg = write_campaign(tmp_path, budget=1, every=0)
    cfg.write_text(
        cfg.read_text()
        + f'\n[pretrain]\nsteps = 2500\nenvs = 2\nopponents = ["{OPPONENT}"]\nupdates_per_step = 0.2\n'
        + "[bot]\naim_shaping = 0.5\n"
        + '[[pretrain.stages]]\nname = "close"\nsteps = 600\ncritic_warmup = 50\n'
        + "[pretrain.stages.bot]\nclose_shaping = 2.0\nanchor = 5.0\n"
        + '[[pretrain.stages]]\nname = "pfsp"\nsteps = 800\nruns = 2\n'
        + '[pretrain.stages.league]\nsampling = "pfsp"\n'
        + "[pretrain.stages.bot]\naim_shaping = 0.25\n"
    )
    out = tmp_path / "run"
    result = campaign(cfg, out)
    assert result.returncode == 0, result.stderr[-2000:]
    events = log(out)
    starts = [e for e in events if e["event"] == "pretrain_start"]
    assert [e.get("name") for e in starts] == [None, "stage-close", "stage-pfsp", "stage-pfsp"]
    assert "--start-actor" in starts[1]["command"] and "--sampling pfsp" in starts[2]["command"]
    names = [e["event"] for e in events]
    assert names.index("pretrain_done") < names.index("chunk_start")
    pre, close, pfsp = (read_meta(out / f / "latest.zip") for f in ("pretrain", "stage-close", "stage-pfsp"))
    trained = read_meta(out / "weights" / "latest.zip")
    assert pre is not None and close is not None and pfsp is not None and trained is not None
    assert pre.env_steps >= 2500 and close.env_steps >= pre.env_steps + 600
    assert pfsp.env_steps >= close.env_steps + 800 and trained.env_steps > pfsp.env_steps
    # Each stage's settings: [bot], then every stage's changes so far; the chunk's bot takes them all.
    assert (close.extra["aim_shaping"], close.extra["close_shaping"]) == (0.5, 2.0)
    assert (pfsp.extra["aim_shaping"], pfsp.extra["close_shaping"]) == (0.25, 2.0)
    assert (trained.extra["aim_shaping"], trained.extra["close_shaping"]) == (0.25, 2.0)
    close_log = (out / "logs" / "stage-close.log").read_text()
    assert "over fresh critics" in close_log
    assert f"the updates before update {pre.updates + 50} (the next 50) step the critics alone" in close_log
    assert (
        "anchor 5: the actor is held near the one this run started from" in close_log
    )  # said as play says it
    pfsp_log = (out / "logs" / "stage-pfsp.log").read_text()
    assert pfsp_log.count("over fresh critics") == 1 and "resumed from" in pfsp_log
    assert pfsp_log.count("trained ") == 2  # two runs, the second resuming the first
    # The --json lines show each phase's progress; each run's last one is where its folder stands.
    shown = [json.loads(line) for line in result.stdout.splitlines() if '"pretrain_progress"' in line]
    ends = {e["name"]: (e["env_steps"], e["updates"], e["until"]) for e in shown}
    assert ends == {
        "pretrain": (pre.env_steps, pre.updates, 2500),
        "stage-close": (close.env_steps, close.updates, pre.env_steps + 600),
        "stage-pfsp": (pfsp.env_steps, pfsp.updates, close.env_steps + 800),
    }
    assert [e["until"] for e in shown if e["name"] == "stage-pfsp"][0] == close.env_steps + 400  # run 1 of 2
    again = campaign(cfg, out)  # the re-run finds every phase done and runs none of them again
    assert again.returncode == 0, again.stderr[-2000:]
    assert len([e for e in log(out) if e["event"] == "pretrain_start"]) == 4
    # `sacbot report` counts the stages' rounds with the pretraining's.
    report = subprocess.run([sys.executable, "-m", "sacbot", "report", str(out)], capture_output=True,
                            text=True, timeout=300)  # fmt: skip
    assert report.returncode == 0, report.stderr[-2000:]
    rounds = sum(len((out / f / "rounds.jsonl").read_text().splitlines()) for f in ("pretrain", "stage-close",
                 "stage-pfsp"))  # fmt: skip
    assert f"| pretraining rounds (train-fast) | {rounds} |" in (out / "report" / "report.md").read_text()
    assert load_run(out).stage_starts == [("close", pre.env_steps), ("pfsp", close.env_steps)]  # marked


def test_sigterm_during_pretraining_saves_it_where_it_stands_and_the_rerun_resumes_it(tmp_path: Path) -> None:
    """A supervisor's SIGTERM to the campaign reaches its train-fast, which saves that env step and its
    replay; no process is left, and the re-run resumes the pretraining from there."""
    cfg = write_campaign(tmp_path, budget=1, every=0)
    cfg.write_text(
        cfg.read_text() + f'\n[pretrain]\nsteps = 10000000\nenvs = 2\nopponents = ["{OPPONENT}"]\n'
    )
    out = tmp_path / "run"
    command = [sys.executable, "-m", "sacbot", "train-campaign", str(cfg), "--out", str(out), "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rounds, deadline = out / "pretrain" / "round_counter.json", time.monotonic() + 120
    while (read_round_counter(rounds) or 0) < 2 and time.monotonic() < deadline:  # pretraining under way
        time.sleep(0.1)
    assert processes_mentioning(str(out.resolve())), "train-fast carries SACBOT_CAMPAIGN_RUN"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert "pretraining: this very step" in stderr.splitlines()[-1], stderr
    pretrain_log = (out / "logs" / "pretrain.log").read_text()
    assert "interrupted: saving where the run stands" in pretrain_log, pretrain_log
    meta = read_meta(out / "pretrain" / "latest.zip")
    assert meta is not None and meta.env_steps > 0
    assert (out / "pretrain" / "replay.npz").is_file()
    assert log(out)[-1]["event"] == "interrupted"
    deadline = time.monotonic() + 10
    while processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_mentioning(str(out))
    again = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while "replay:" not in (out / "logs" / "pretrain.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    again.send_signal(signal.SIGTERM)
    again.communicate(timeout=180)
    resumed = (out / "logs" / "pretrain.log").read_text()
    assert f"resumed from {out / 'pretrain' / 'latest.zip'} (env steps {meta.env_steps}," in resumed, resumed
    assert "kept rounds" in resumed
    # The resumed pretraining is given what is left of the file's budget, not the whole budget again.
    starts = [e["command"] for e in log(out) if e["event"] == "pretrain_start"]
    assert "--steps 10000000 " in starts[0] and f"--steps {10000000 - meta.env_steps} " in starts[1], starts
