"""A small but real campaign run folder for the report tests (a uniquely named helper module, not a conftest).

The real campaign loop writes campaign_log.jsonl, eval_log.jsonl, best.zip and best_score.json; each chunk
runs the real trainer thread and round-end saver of `sacbot play`, which write latest.zip,
training_metrics.jsonl, rounds.jsonl and round_counter.json. Only the game processes and the networks are
stood in for: the learner here returns scripted losses (a real SAC update costs far more than this test
may), and the eval results are scripted so the report's table can be checked number by number.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sacbot.campaign.config import opponent_name, parse_campaign
from sacbot.campaign.loop import CampaignLoop, ChunkFailed, ChunkOutcome, GameScore
from sacbot.checkpoint import read_meta
from sacbot.rundir import RunPaths
from sacbot.runtime.channel import DropOldestChannel
from sacbot.runtime.records import ChannelItem, RoundReport, Transition
from sacbot.runtime.saver import RoundEndSaver
from sacbot.runtime.trainer import ThreadConfig, TrainerThread

EVAL_OPPONENTS = ("SpinBot", "Walls")
# (wins, score share) per eval chunk and opponent, out of EVAL_ROUNDS rounds.
EVAL_RESULTS: dict[int, dict[str, tuple[int, float]]] = {
    1: {"SpinBot": (8, 0.41), "Walls": (4, 0.30)},
    2: {"SpinBot": (15, 0.66), "Walls": (9, 0.52)},
    3: {"SpinBot": (19, 0.81), "Walls": (15, 0.66)},
}
EVAL_ROUNDS = 20
CHUNK_ROUNDS = 3
BUDGET = 3
ROUND_TURNS = 40


def wait_for(condition: Callable[[], bool], what: str, limit_s: float = 30.0) -> None:
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


def play_game(
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
            wait_for(at_least(lambda: trainer.added, r * ROUND_TURNS), "drain")
            wait_for(lambda: trainer.updates_here >= trainer.added // 2, "updates")
            wins += own > enemy
            outcome = "won" if own > enemy else "lost"
            p99 = 1.1 + r / 10
            trainer.round_ended(RoundReport(r, outcome, 3.5, ROUND_TURNS, 0, 0.4, p99, 2.5, 0, own, enemy))
            wait_for(at_least(lambda: trainer.rounds_saved, r), "round save")
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
        wins = play_game(
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


def build_run(out: Path) -> Path:
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


def build_league_run(out: Path, budget: int = 4) -> Path:
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
