"""The campaign loop: chunks with bounded retries, periodic evals, global-best promotion, resume from the log.

The loop owns the decisions (which chunk is next, whether to retry, when to eval, whether to promote); a
`Backend` does the I/O of one chunk or one eval game (`sacbot.campaign.runner.ArenaBackend` for real games).
Every decision is written to the campaign log before or as it takes effect, so a re-run resumes where the last
run stopped: the completed chunk count comes from the log, the weights from the `latest` checkpoint.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from sacbot.campaign.config import Campaign, opponent_name
from sacbot.campaign.log import CampaignLog, ResumeState
from sacbot.campaign.retry import RetryPolicy
from sacbot.campaign.scoring import composite, score_kind, should_promote
from sacbot.errors import UserError
from sacbot.opponents.sampling import OpponentSampler
from sacbot.records import BestScore, EvalRecord, append_eval, read_eval_log, write_best_score
from sacbot.rundir import RunPaths

if TYPE_CHECKING:
    from sacbot.campaign.league import CampaignLeague

Reporter = Callable[[dict[str, Any]], None]
# (checkpoint bytes, an eval campaign's data, opponents, rounds, retries) -> one score per opponent, in order:
# the games run elsewhere at once (`sacbot.distributed.games.evaluate_ray`).
RemoteEval = Callable[[bytes, dict[str, Any], list[str], int, int], list[tuple[str, "GameScore"]]]
LOGGED_BACKEND_EVENTS = ("server_restart", "fault_injected", "pretrain_start")
_T = TypeVar("_T")


class ChunkFailed(Exception):
    """A chunk or eval game that crashed or hung; its processes are already stopped. The loop retries it."""


class CampaignFailed(UserError):
    """A chunk failed more often than the retry policy allows: the budget is unfinished (exit 1)."""


@dataclass(frozen=True)
class ChunkOutcome:
    rounds: int
    wins: int
    score_share: float
    seconds: float


@dataclass(frozen=True)
class GameScore:
    """One eval game of the policy against one opponent."""

    rounds: int
    wins: int
    win_rate: float
    score_share: float
    bullet_damage: float


class Backend(Protocol):
    def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Reporter) -> ChunkOutcome: ...

    def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Reporter) -> GameScore: ...

    def pretrain(self, report: Reporter) -> None: ...

    def close(self) -> None: ...


def eval_due(campaign: Campaign, chunk: int) -> bool:
    every = campaign.eval.every
    return every > 0 and (chunk % every == 0 or chunk == campaign.chunks.budget)


def stored_best_score(path: Path, kind: str) -> float | None:
    """The global best's stored score when it measures `kind` (the archive's metadata is the truth)."""
    if not path.exists():
        return None
    from sacbot.checkpoint.archive import read_meta

    try:
        meta = read_meta(path)
    except UserError:
        return None
    if meta is None or meta.score is None or meta.score_kind != kind:
        return None
    return float(meta.score)


class CampaignLoop:
    def __init__(
        self,
        campaign: Campaign,
        out: Path,
        backend: Backend,
        report: Reporter = lambda event: None,
        sleep: Callable[[float], None] = time.sleep,
        remote_eval: RemoteEval | None = None,
    ) -> None:
        """`remote_eval` plays each eval's games at once elsewhere (a campaign's `[ray]`); else the backend
        plays them one after another."""
        self.campaign = campaign
        self.remote_eval = remote_eval
        self.paths = RunPaths(out)
        self.backend = backend
        self._report = report
        self._sleep = sleep
        self.log = CampaignLog(self.paths.campaign_log)
        self.sampler = OpponentSampler(campaign.opponents, campaign.seed)
        self.league: CampaignLeague | None = None
        if campaign.league is not None:
            from sacbot.campaign.league import CampaignLeague

            self.league = CampaignLeague(campaign, self.paths)
        r = campaign.retry
        self.policy = RetryPolicy(r.max_retries, r.backoff_s, r.backoff_factor, r.backoff_max_s)
        self.kind = score_kind(campaign.eval.metric, campaign.eval.window)
        if campaign.log.tensorboard is not None:
            from sacbot.tensorboard import require_tensorboard

            require_tensorboard()  # before any chunk: its bot would fail on the same missing package

    def _event(self, event: str, **fields: Any) -> None:
        self._report(self.log.write(event, **fields))

    def _backend_event(self, event: dict[str, Any]) -> None:
        """Progress from the backend: shown live; the rare ones worth keeping also go to the campaign log."""
        if event.get("event") in LOGGED_BACKEND_EVENTS:
            fields = {k: v for k, v in event.items() if k != "event"}
            event = self.log.write(str(event["event"]), **fields)
        self._report(event)

    def run(self) -> ResumeState:
        """Run the budget to the end (or resume it). Raises CampaignFailed, KeyboardInterrupt."""
        self.paths.out.mkdir(parents=True, exist_ok=True)
        events = self.log.events()
        others = {str(e.campaign) for e in events if e.event == "start"} - {self.campaign.name}
        if others:
            raise UserError(
                f"{self.paths.out} holds a run of campaign {sorted(others)[0]!r}, "
                f"not {self.campaign.name!r}; choose another --out",
                exit_code=2,
            )
        seeds = {e.seed for e in events if e.event == "start" and e.seed is not None} - {self.campaign.seed}
        if seeds:
            other = min(seeds)
            raise UserError(
                f"{self.paths.out} holds a run with seed {other}, not {self.campaign.seed}; "
                f"resume it with --seed {other}, or choose another --out",
                exit_code=2,
            )
        state = ResumeState.from_events(events)
        budget = self.campaign.chunks.budget
        self._event(
            "start",
            campaign=self.campaign.name,
            seed=self.campaign.seed,
            budget=budget,
            completed=state.completed,
        )
        chunk = state.completed
        try:
            self._prepare(state)
            if self.league is not None:
                # The pool the log describes; a snapshot a kill interrupted is taken now (`latest` is still
                # the weights its chunk left), and folders the log no longer lists go.
                if (
                    chunk > 0
                    and self.league.snapshot_due(chunk)
                    and not self.league.snapshot_taken(events, chunk)
                ):
                    self._snapshot(chunk)
                self.league.prune(self.league.pool_snapshots(self.log.events()))
            if chunk == 0 and self._pretrained_unscored(state):
                # The pretrained weights get an eval of their own, so if real-time fine-tuning only makes
                # them worse, best.zip still holds them.
                self._eval(0)
                state.evaluated.add(0)
            if chunk > 0 and eval_due(self.campaign, chunk) and chunk not in state.evaluated:
                self._eval(chunk)  # the previous run stopped between a chunk and its eval
            while chunk < budget:
                chunk += 1
                self._chunk(chunk)
                state.completed = chunk
                if self.league is not None and self.league.snapshot_due(chunk):
                    self._snapshot(chunk)
                if eval_due(self.campaign, chunk):
                    self._eval(chunk)
                    state.evaluated.add(chunk)
        except KeyboardInterrupt:
            self._event("interrupted", chunk=chunk, completed=state.completed)
            raise
        self._event("finished", completed=state.completed, budget=budget, best=self.best_composite())
        return state

    def _pretrained_unscored(self, state: ResumeState) -> bool:
        return (
            self.campaign.pretrain is not None
            and self.campaign.eval.every > 0
            and 0 not in state.evaluated
            and self.paths.latest.exists()
        )

    def best_composite(self) -> float | None:
        return stored_best_score(self.paths.best, self.kind)

    def _prepare(self, state: ResumeState) -> None:
        """Seed `latest` once: from `start_from`, or from a pretraining phase; otherwise play starts fresh."""
        if self.paths.latest.exists():
            return
        if self.campaign.start_from is not None:
            from sacbot.checkpoint.atomic import atomic_write_bytes

            try:
                data = self.campaign.start_from.read_bytes()
            except OSError as exc:
                raise UserError(
                    f"start_from: cannot read {self.campaign.start_from}: {exc.strerror}", 2
                ) from None
            atomic_write_bytes(self.paths.latest, data)
            self._event("seeded", source=str(self.campaign.start_from))
        elif self.campaign.pretrain is not None and not state.pretrained:
            self._retrying("pretrain", 0, lambda: self.backend.pretrain(self._backend_event))
            self._event("pretrain_done")

    def _retrying(self, what: str, chunk: int, attempt_fn: Callable[[], _T], **fields: Any) -> _T:
        failures = 0
        while True:
            try:
                return attempt_fn()
            except ChunkFailed as exc:
                failures += 1
                if not self.policy.may_retry(failures):
                    what_text = f"chunk {chunk}" if what == "chunk" else f"{what} (after chunk {chunk})"
                    self._event(
                        "gave_up", what=what, chunk=chunk, attempts=failures, reason=str(exc), **fields
                    )
                    raise CampaignFailed(
                        f"{what_text} failed {failures} times (last: {exc}); "
                        f"the budget is unfinished, re-run the same command to resume",
                        exit_code=1,
                    ) from None
                delay = self.policy.delay(failures)
                self._event(
                    "chunk_failed",
                    what=what,
                    chunk=chunk,
                    attempt=failures,
                    reason=str(exc),
                    retry_in_s=delay,
                    **fields,
                )
                self._sleep(delay)

    def _snapshot(self, chunk: int) -> None:
        """A frozen twin of `latest` joins the league's pool; the oldest beyond the cap leaves it."""
        assert self.league is not None
        fields = self.league.take_snapshot(chunk, self.log.events())
        if fields is None:
            self._event("snapshot_skipped", chunk=chunk, reason="no latest checkpoint yet")
            return
        self._event("snapshot", **fields)
        self.league.prune(fields["pool"])

    def _draw(self, chunk: int) -> str:
        if self.league is None:
            return self.sampler.sample(chunk)
        opponent, fields = self.league.draw(chunk, self.log.events())
        self._event("league_draw", **fields)
        return opponent

    def _chunk(self, chunk: int) -> None:
        opponent = self._draw(chunk)
        rounds = self.campaign.chunks.rounds
        attempt = 0

        def one_attempt() -> ChunkOutcome:
            nonlocal attempt
            attempt += 1
            self._event(
                "chunk_start", chunk=chunk, attempt=attempt, opponent=opponent_name(opponent), rounds=rounds
            )
            return self.backend.run_chunk(chunk, opponent, rounds, self._backend_event)

        outcome = self._retrying("chunk", chunk, one_attempt, opponent=opponent_name(opponent))
        self._event(
            "chunk_done",
            chunk=chunk,
            attempt=attempt,
            opponent=opponent_name(opponent),
            rounds=outcome.rounds,
            wins=outcome.wins,
            win_rate=outcome.wins / outcome.rounds if outcome.rounds else 0.0,
            score_share=outcome.score_share,
            seconds=round(outcome.seconds, 3),
        )

    def _eval(self, chunk: int) -> None:
        cfg = self.campaign.eval
        if not self.paths.latest.exists():
            self._event("eval_skipped", chunk=chunk, reason="no latest checkpoint yet")
            self._event("eval_done", chunk=chunk, composite=None, best=self.best_composite(), promoted=False)
            return
        # Evaluate a frozen copy, so the candidate that gets promoted is exactly the one that was scored.
        candidate = self.paths.candidate(chunk)
        from sacbot.checkpoint.atomic import atomic_write_bytes

        atomic_write_bytes(candidate, self.paths.latest.read_bytes())
        records: list[dict[str, Any]] = []
        for name, score in self._eval_games(candidate, chunk):
            record = EvalRecord(
                opponent=name,
                rounds=score.rounds,
                wins=score.wins,
                win_rate=score.win_rate,
                score_share=score.score_share,
                chunk=chunk,
                time=round(time.time(), 3),
                bullet_damage=score.bullet_damage,
            )
            append_eval(self.paths.eval_log, record)
            records.append(record.model_dump())
            self._report({"event": "eval_result", **record.model_dump()})
        history = read_eval_log(self.paths.eval_log)
        names = [opponent_name(e) for e in cfg.opponents]
        value = composite(history, names, cfg.metric, cfg.window)
        incumbent = self.best_composite()
        promoted = False
        if should_promote(value, incumbent) and value is not None:
            promoted = self._promote(candidate, value, chunk)
        self._event("eval_done", chunk=chunk, composite=value, best=self.best_composite(), promoted=promoted)
        if self.campaign.log.tensorboard is not None:
            self._board_eval(candidate, records, value)
        candidate.unlink(missing_ok=True)

    def _eval_games(self, candidate: Path, chunk: int) -> Iterator[tuple[str, GameScore]]:
        """(opponent, score) per eval opponent, in order, each as its game ends (remote: all at the end)."""
        cfg = self.campaign.eval
        if self.remote_eval is not None:
            remote = self.remote_eval
            data = self.campaign.eval_game_data()
            entries: list[str] = data["eval"]["opponents"]
            names = [opponent_name(e) for e in entries]

            def all_games() -> list[tuple[str, GameScore]]:
                try:
                    return remote(candidate.read_bytes(), data, entries, cfg.rounds, 1)
                except UserError as exc:  # a game that failed its own retries: the loop's retry policy
                    raise ChunkFailed(str(exc)) from None

            scores = self._retrying("eval", chunk, all_games, opponents=names)
            yield from ((name, score) for name, (_, score) in zip(names, scores, strict=True))
            return
        for entry in cfg.opponents:

            def one_game(entry: str = entry) -> GameScore:
                return self.backend.run_eval(candidate, entry, cfg.rounds, self._backend_event)

            yield opponent_name(entry), self._retrying("eval", chunk, one_game, opponent=opponent_name(entry))

    def _board_eval(self, candidate: Path, records: list[dict[str, Any]], value: float | None) -> None:
        """The eval's lines and composite as TensorBoard scalars, at the candidate's environment steps.

        A writer of its own per eval, closed at once: the bots' writers in the same folder never overlap it.
        """
        from sacbot.checkpoint.archive import read_meta
        from sacbot.tensorboard import TensorBoardSink

        assert self.campaign.log.tensorboard is not None
        meta = read_meta(candidate)
        step = meta.env_steps if meta is not None else 0
        with TensorBoardSink(self.campaign.log.tensorboard) as board:
            board.evaluation(records, value, step)

    def _promote(self, candidate: Path, value: float, chunk: int) -> bool:
        from sacbot.checkpoint import CheckpointMeta, load_checkpoint, offer_best

        arrays, meta = load_checkpoint(candidate)
        if not offer_best(self.paths.best, arrays, meta or CheckpointMeta(), value, self.kind):
            return False
        promoted_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write_best_score(self.paths, BestScore(score=value, kind=self.kind, chunk=chunk, time=promoted_at))
        self._event("promoted", chunk=chunk, composite=value)
        return True


def copy_tree_file(src: Path, dst: Path) -> None:
    """Copy a file atomically (used for seeding weights folders)."""
    from sacbot.checkpoint.atomic import atomic_write

    with open(src, "rb") as fh:
        atomic_write(dst, lambda out: shutil.copyfileobj(fh, out))
