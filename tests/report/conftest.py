"""Fixtures of the report tests: `sacbot` and checks of the report's text and images, and a run folder.

The run folder (`build_run`, `build_league_run`, `play_game`): a small but real campaign run folder for the
report tests.

The real campaign loop writes campaign_log.jsonl, eval_log.jsonl, best.zip and best_score.json; each chunk
runs the real trainer thread and round-end saver of `sacbot play`, which write latest.zip,
training_metrics.jsonl, rounds.jsonl and round_counter.json. Only the game processes and the networks are
stood in for: the learner here returns scripted losses (a real SAC update costs far more than this test
may), and the eval results are scripted so the report's table can be checked number by number.
"""

from __future__ import annotations

import io
import math
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from sacbot.campaign.config import opponent_name, parse_campaign
from sacbot.campaign.loop import CampaignLoop, ChunkFailed, ChunkOutcome, GameScore
from sacbot.checkpoint import read_meta
from sacbot.rundir import RunPaths
from sacbot.runtime.channel import DropOldestChannel
from sacbot.runtime.records import ChannelItem, RoundReport, Transition
from sacbot.runtime.saver import RoundEndSaver
from sacbot.runtime.trainer import ThreadConfig, TrainerThread

from .report_support import EVAL_OPPONENTS, EVAL_RESULTS, EVAL_ROUNDS

CHUNK_ROUNDS = 3
BUDGET = 3
ROUND_TURNS = 40


def _wait_for(condition: Callable[[], bool], what: str, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.002)


def at_least(value: Callable[[], int], target: int) -> Callable[[], bool]:
    return lambda: value() >= target


class ScriptedLearner:
    """The runtime's Learner interface with scripted, decreasing losses instead of a network."""

    def __init__(self, env_steps: int, updates: int) -> None:
        self.env_steps = env_steps
        self.updates = updates
        self.stored = 0
        self.rounds = 0

    def add(self, transition: Transition) -> None:
        self.env_steps += 1
        self.stored += 1
        self.rounds += bool(transition.done)

    def cut_episode(self) -> None:
        pass

    def rounds_stored(self) -> int:
        return self.rounds

    def replay_size(self) -> int:
        return self.stored

    def update(self) -> dict[str, float]:
        self.updates += 1
        u = self.updates
        time.sleep(0.0002)  # a little work per update, so updates/s is a finite figure
        return {
            "critic_loss": 2.0 / (1.0 + 0.02 * u),
            "actor_loss": -0.5 - 0.002 * u,
            "alpha_loss": 0.1 * math.exp(-u / 200),
            "alpha": 0.2 * math.exp(-u / 400),
        }

    def fast_actor(self) -> Any:
        return object()

    def export_replay(self, max_steps: int) -> dict[str, np.ndarray]:
        return {}  # no replay to keep

    def state_arrays(self) -> dict[str, np.ndarray]:
        return {"w": np.full(4, self.updates, np.float32)}

    def network_sizes(self) -> dict[str, Any]:
        return {"hidden": 4}


def _transitions(rng: np.random.Generator) -> list[Transition]:
    out = []
    for i in range(ROUND_TURNS):
        obs = rng.uniform(-1, 1, 17).astype(np.float32)
        out.append(
            Transition(obs, np.zeros(4, np.float32), 0.1, obs, i == ROUND_TURNS - 1, np.zeros(4, np.float32))
        )
    return out


def _play_game(
    weights: Path,
    opponent: str | None,
    scores: Sequence[tuple[float, float]],
    rng: np.random.Generator,
    crash_after: int | None = None,
) -> int:
    """One `sacbot play` game of len(scores) rounds ((own, enemy) score each) through the real trainer thread
    and round-end saver into `weights` (resumed from its latest.zip), which write latest.zip,
    training_metrics.jsonl, rounds.jsonl and round_counter.json; the rounds won. `crash_after`: the process
    dies (ChunkFailed) once that many rounds are saved."""
    latest = weights / "latest.zip"
    meta = read_meta(latest) if latest.is_file() else None
    learner = ScriptedLearner(meta.env_steps if meta else 0, meta.updates if meta else 0)
    channel: DropOldestChannel[ChannelItem] = DropOldestChannel(4096)
    saver = RoundEndSaver(weights, opponent, best_window=2, log=io.StringIO())
    trainer = TrainerThread(learner, channel, saver, ThreadConfig(warmup_rounds=1, utd_ratio=0.5))
    trainer.start()
    wins = 0
    try:
        for r, (own, enemy) in enumerate(scores, start=1):
            for item in _transitions(rng):
                channel.put(item)
            _wait_for(at_least(lambda: trainer.added, r * ROUND_TURNS), "drain")
            _wait_for(lambda: trainer.updates_here >= trainer.added // 2, "updates")
            wins += own > enemy
            outcome = "won" if own > enemy else "lost"
            p99 = 1.1 + r / 10
            trainer.round_ended(RoundReport(r, outcome, 3.5, ROUND_TURNS, 0, 0.4, p99, 2.5, 0, own, enemy))
            _wait_for(at_least(lambda: trainer.rounds_saved, r), "round save")
            if crash_after is not None and r >= crash_after:
                raise ChunkFailed("SacBot exited with code -9 before the game ended")
    finally:
        trainer.stop()
    assert trainer.error is None, trainer.error_text
    return wins


class PlayLikeBackend:
    """Chunks through the real trainer thread and saver; evals scripted from EVAL_RESULTS."""

    def __init__(self, out: Path, crash_chunk: int | None = None) -> None:
        self.paths = RunPaths(out)
        self.crash_chunk = crash_chunk
        self.attempts: dict[int, int] = {}
        self.rng = np.random.default_rng(7)

    def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Any) -> ChunkOutcome:
        attempt = self.attempts[chunk] = self.attempts.get(chunk, 0) + 1
        scores = [(70.0, 30.0) if r % 2 else (40.0, 60.0) for r in range(1, rounds + 1)]
        crash = chunk == self.crash_chunk and attempt == 1
        started = time.monotonic()
        # The opponent is a name, or a league snapshot's folder: the bot knows it by its name.
        wins = _play_game(
            self.paths.weights.folder,
            opponent_name(opponent),
            scores,
            self.rng,
            crash_after=1 if crash else None,
        )
        return ChunkOutcome(rounds=rounds, wins=wins, score_share=0.55, seconds=time.monotonic() - started)

    def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Any) -> GameScore:
        chunk = int(checkpoint.stem.rsplit("-", 1)[1])  # the loop evaluates eval/candidate-<chunk>.zip
        wins, share = EVAL_RESULTS[min(chunk, max(EVAL_RESULTS))][opponent]
        return GameScore(rounds, wins, wins / rounds, share, bullet_damage=100.0 * share)

    def pretrain(self, report: Any) -> None:
        raise AssertionError("no pretraining in this run")

    def close(self) -> None:
        pass


def _build_run(out: Path) -> Path:
    """A finished 3-chunk campaign with an eval after every chunk and one crashed attempt of chunk 2."""
    campaign = parse_campaign(
        {
            "name": "report-test",
            "chunks": {"rounds": CHUNK_ROUNDS, "budget": BUDGET},
            "opponents": {"SpinBot": 1, "Walls": 1},
            "eval": {"every": 1, "rounds": EVAL_ROUNDS, "opponents": list(EVAL_OPPONENTS), "window": 5},
            "retry": {"max_retries": 2, "backoff_s": 0.0},
        }
    )
    CampaignLoop(campaign, out, PlayLikeBackend(out, crash_chunk=2), sleep=lambda s: None).run()
    return out


def _build_league_run(out: Path, budget: int = 4) -> Path:
    """A finished campaign with a `[league]` table: PFSP draws logged per chunk, and a SacSnap snapshot of
    `latest` (a real frozen twin) after every chunk joining the pool, two at most."""
    campaign = parse_campaign(
        {
            "name": "report-league-test",
            "chunks": {"rounds": CHUNK_ROUNDS, "budget": budget},
            "opponents": {"SpinBot": 1, "Walls": 1},
            "eval": {"every": 2, "rounds": EVAL_ROUNDS, "opponents": list(EVAL_OPPONENTS), "window": 5},
            "retry": {"max_retries": 0, "backoff_s": 0.0},
            "league": {"sampling": "pfsp", "snapshot_every": 1, "snapshot_cap": 2},
        }
    )
    CampaignLoop(campaign, out, PlayLikeBackend(out), sleep=lambda s: None).run()
    return out


def _sacbot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args], capture_output=True, text=True, timeout=120, check=False
    )


def _assert_png(path: Path) -> None:
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size[0] >= 400 and image.size[1] >= 300
        image.load()  # decodes every pixel: a truncated file fails here


def _section(text: str, heading: str) -> str:
    """The lines from the `## heading...` line to the next `## ` heading."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"## {heading}"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end])


def _table_row(text: str, first_cell: str) -> list[str]:
    rows = [line for line in text.splitlines() if line.startswith(f"| {first_cell} |")]
    assert len(rows) == 1, f"expected one row for {first_cell}, got {rows}"
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


@pytest.fixture(scope="session")
def build_run() -> Callable[[Path], Path]:
    """`build_run(out)`: a three-chunk campaign run folder at out, with scripted eval results."""
    return _build_run


@pytest.fixture(scope="session")
def build_league_run() -> Callable[..., Path]:
    """`build_league_run(out, budget=4)`: a league campaign run folder at out."""
    return _build_league_run


@pytest.fixture(scope="session")
def play_game() -> Callable[..., int]:
    """`play_game(weights, opponent, scores, rng, crash_after=None)`: one game through `sacbot play`'s trainer
    thread and saver, with scripted round scores."""
    return _play_game


@pytest.fixture(scope="session")
def sacbot() -> Callable[..., subprocess.CompletedProcess[str]]:
    """`sacbot(*args)`: runs `python -m sacbot args...` and returns the finished process."""
    return _sacbot


@pytest.fixture(scope="session")
def assert_png() -> Callable[[Path], None]:
    """`assert_png(path)`: the file is a whole PNG of at least 400x300."""
    return _assert_png


@pytest.fixture(scope="session")
def section() -> Callable[[str, str], str]:
    """`section(text, heading)`: the lines from the `## heading...` line to the next `## ` heading."""
    return _section


@pytest.fixture(scope="session")
def table_row() -> Callable[[str, str], list[str]]:
    """`table_row(text, first_cell)`: the cells of the one table row that starts with first_cell."""
    return _table_row
