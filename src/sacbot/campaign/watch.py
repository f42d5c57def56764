"""The watch over one campaign game: run it through the arena's controller client and fail it (`ChunkFailed`)
when the liveness rule breaks (round events and the bot's round counter must advance), a bot process exits
early or the server goes away; report each round's figures for the live view on the way."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sacbot.campaign.config import Campaign
from sacbot.campaign.liveness import LivenessWatch
from sacbot.campaign.loop import ChunkFailed, Reporter
from sacbot.campaign.scoring import RoundWins, summarize_results
from sacbot.errors import UserError
from sacbot.jsonl import Follower
from sacbot.records import MetricsLine, RoundLine, parse_rows, read_round_counter
from sacbot.rundir import WeightsPaths

_POLL_S = 0.25


@dataclass
class LiveStats:
    """Per-chunk figures for the live view, from the bot's rounds.jsonl and training_metrics.jsonl."""

    skipped_turns: int = 0
    alpha: float | None = None
    losses: dict[str, float] = field(default_factory=dict)
    updates_per_s: float | None = None
    _updates: tuple[float, int] | None = None

    def absorb(self, rounds: list[RoundLine], metrics: list[MetricsLine]) -> None:
        for r in rounds:
            self.skipped_turns += r.skipped_turns or 0
        for m in metrics:
            if m.alpha is not None:
                self.alpha = m.alpha
            self.losses = m.losses()
            if m.updates is not None:  # on the bot's own clock
                if self._updates is not None and m.time > self._updates[0]:
                    self.updates_per_s = (m.updates - self._updates[1]) / (m.time - self._updates[0])
                self._updates = (m.time, m.updates)


@dataclass(frozen=True)
class WatchedGame:
    rounds: int
    results: list[dict[str, Any]]
    seconds: float
    wins: int  # rounds the training bot was the last one standing (see RoundWins)


class GameWatch:
    """One game through the arena's controller client, with the liveness rule and process checks."""

    def __init__(
        self,
        campaign: Campaign,
        url: str,
        controller_secret: str | None,
        names: tuple[str, str],
        rounds: int,
        procs: list[Any],
        counter: Path | None,
        weights: WeightsPaths,
        arena_alive: Callable[[], bool],
        report: Reporter,
        after_round_1: Callable[[], None] | None = None,
    ) -> None:
        """`after_round_1` (fault injection, `sacbot.campaign.faults`) is called once, when round 1 ended."""
        self.campaign = campaign
        self.url = url
        self.secret = controller_secret
        self.names = names
        self.rounds = rounds
        self.procs = procs
        self.counter = counter
        self.after_round_1 = after_round_1
        self.arena_alive = arena_alive
        self.report = report
        self.rounds_tail = Follower(weights.rounds)
        self.metrics_tail = Follower(weights.training_metrics)
        self.stats = LiveStats()
        self.round_wins = RoundWins(names[0])
        baseline = read_round_counter(counter) if counter is not None else None
        self.watch: LivenessWatch | None = None
        self.counter_baseline = None if counter is None else (baseline if baseline is not None else -1)

    def _check_processes(self) -> None:
        for proc in self.procs:
            code = proc.exit_code()
            # Exit code 0 can be a bot that saw GameEnded a moment before we did; a real early exit then shows
            # up as an aborted game or a stalled round instead.
            if code not in (None, 0):
                tail = proc.log_tail(1).strip()
                said = f" (its last line: {tail[:200]})" if tail else ""
                raise ChunkFailed(f"{proc.entry.name} exited with code {code} before the game ended{said}")
        if not self.arena_alive():
            raise ChunkFailed("the embedded arena stopped")

    def _check(self) -> None:
        self._check_processes()
        now = time.monotonic()
        if self.watch is None:
            return
        if self.counter is not None:
            self.watch.counter(read_round_counter(self.counter), now)
        reason = self.watch.hung(now)
        if reason:
            raise ChunkFailed(f"hung: {reason}")

    async def run(self) -> WatchedGame:
        from websockets.exceptions import ConnectionClosed

        from sacbot.arena.controller import Controller

        start = time.monotonic()
        try:
            ctl = await Controller.connect(self.url, self.secret, name="sacbot train-campaign")
        except UserError as exc:
            raise ChunkFailed(str(exc)) from None
        try:
            async with ctl:
                bots = await ctl.wait_for_bots(
                    self.names, self.campaign.liveness.boot_timeout_s, alive=self._check_processes
                )
                self.watch = LivenessWatch(
                    self.campaign.liveness.round_timeout_s, time.monotonic(), self.counter_baseline
                )
                game = asyncio.ensure_future(
                    ctl.run_game(
                        self._setup(),
                        bots,
                        on_event=self._on_event,
                        start_timeout=self.campaign.liveness.boot_timeout_s,
                    )
                )
                try:
                    while True:
                        done, _ = await asyncio.wait({game}, timeout=_POLL_S)
                        if done:
                            break
                        self._check()
                except BaseException:
                    game.cancel()
                    try:
                        await asyncio.wait_for(ctl.stop_game(), 1.0)
                    except Exception:  # noqa: BLE001 - the server may already be gone
                        pass
                    raise
                result = game.result()
        except ConnectionClosed as exc:
            raise ChunkFailed(f"the server closed the controller connection ({exc})") from None
        except ChunkFailed:
            raise
        except UserError as exc:  # the arena's client: a bot that never connected, an aborted game
            raise ChunkFailed(str(exc)) from None
        except OSError as exc:
            raise ChunkFailed(f"lost the server: {exc}") from None
        await self._await_saved_rounds(result.number_of_rounds)
        results = [_as_dict(r) for r in result.results]
        return WatchedGame(result.number_of_rounds, results, time.monotonic() - start, self.round_wins.wins)

    async def _await_saved_rounds(self, rounds: int) -> None:
        """A chunk is complete only when the bot saved every round of it: its counter must reach baseline +
        rounds soon after the game ended (a bot frozen in the last round never gets there)."""
        if self.counter is None or self.counter_baseline is None:
            return
        want = max(self.counter_baseline, 0) + rounds
        deadline = time.monotonic() + self.campaign.liveness.round_timeout_s
        while True:
            have = read_round_counter(self.counter)
            if have is not None and have >= want:
                return
            self._check_processes()  # a bot killed in the last round: say so now, not after the timeout
            if time.monotonic() > deadline:
                saved = (have or 0) - max(self.counter_baseline, 0)
                raise ChunkFailed(f"hung: the bot saved {saved} of {rounds} rounds after the game ended")
            await asyncio.sleep(0.1)

    def _on_event(self, msg: Any) -> None:
        from sacbot.protocol import RoundEndedEventForObserver, RoundStartedEvent

        now = time.monotonic()
        if self.watch is None:
            return
        if isinstance(msg, RoundStartedEvent):
            self.watch.round_event(msg.round_number, False, now)
        elif isinstance(msg, RoundEndedEventForObserver):
            self.watch.round_event(msg.round_number, True, now)
            results = [_as_dict(r) for r in msg.results]
            self.round_wins.absorb(results)
            self._round_progress(msg.round_number, results)
            hook, self.after_round_1 = self.after_round_1, None
            if hook is not None:
                hook()
        else:
            self.watch.any_event(now)

    def _setup(self) -> Any:
        from sacbot.engine import game_setup_for

        overrides = {**self.campaign.game.setup, "number_of_rounds": self.rounds}
        try:
            return game_setup_for(self.campaign.game.type, **overrides)
        except (TypeError, ValueError) as exc:
            raise UserError(f"game.setup: {exc}", exit_code=2) from None

    def _round_progress(self, number: int, results: list[dict[str, Any]]) -> None:
        self.stats.absorb(
            parse_rows(RoundLine.model_validate, self.rounds_tail.read())[0],
            parse_rows(MetricsLine.model_validate, self.metrics_tail.read())[0],
        )
        wins, win_rate, share, _ = summarize_results(results, self.names[0], number, self.round_wins.wins)
        self.report(
            {
                "event": "round",
                "round": number,
                "rounds": self.rounds,
                "wins": wins,
                "win_rate": win_rate,
                "score_share": share,
                "skipped_turns": self.stats.skipped_turns,
                "updates_per_s": self.stats.updates_per_s,
                "alpha": self.stats.alpha,
                "losses": self.stats.losses,
            }
        )


def _as_dict(result: Any) -> dict[str, Any]:
    from sacbot.protocol import to_dict

    return result if isinstance(result, dict) else to_dict(result)
