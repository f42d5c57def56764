"""The process shell of a campaign: one game (a training chunk or an eval game) on an arena.

Per game: make sure the server is up (restarting a crashed embedded arena), boot the opponent's directory and
the training bot's directory, connect as a controller, wait for both bots, start the game, and watch it. The
watch applies the liveness rule (round events and the bot's round counter must advance) and notices a bot
process that exits early or a server that goes away; any of these stops exactly the processes this game
started and raises `ChunkFailed`, which the campaign loop retries from the `latest` checkpoint.

Test-only fault injection (`SACBOT_CAMPAIGN_FAULTS`, e.g. `kill_bot@2.1,hang_bot@3.1,server_crash@1.1`): when
round 1 of chunk N, attempt A has ended, kill the training bot (SIGKILL), freeze it (SIGSTOP) or stop the
embedded arena. The failure then travels the ordinary detection and retry path.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sacbot.campaign.config import Campaign, opponent_name
from sacbot.campaign.liveness import LivenessWatch
from sacbot.campaign.loop import ChunkFailed, ChunkOutcome, GameScore, Reporter
from sacbot.campaign.scoring import RoundWins, summarize_results
from sacbot.errors import UserError
from sacbot.jsonl import Follower
from sacbot.records import MetricsLine, RoundLine, parse_rows, read_round_counter
from sacbot.rundir import RunPaths, WeightsPaths

FAULTS_ENV = "SACBOT_CAMPAIGN_FAULTS"
_POLL_S = 0.25
# Campaign-controlled settings of the training bot; an opponent never inherits them from our environment.
_BOT_KEYS = (
    "SACBOT_WEIGHTS_DIR",
    "SACBOT_OPPONENT",
    "SACBOT_CHECKPOINT",
    "SACBOT_EVAL_MODE",
    "SACBOT_BOT_JSON",
    "SACBOT_SEED",
    "SACBOT_SHIPPED",
)


def parse_faults(spec: str | None) -> dict[tuple[int, int], str]:
    """`kind@chunk.attempt,...` -> {(chunk, attempt): kind}; eval games count as chunk 0."""
    faults: dict[tuple[int, int], str] = {}
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        kind, _, where = item.partition("@")
        chunk, _, attempt = where.partition(".")
        if kind not in ("kill_bot", "hang_bot", "server_crash") or not chunk.isdigit():
            raise UserError(f"bad {FAULTS_ENV} item {item!r}", exit_code=2)
        faults[(int(chunk), int(attempt or "1"))] = kind
    return faults


def resolve_bot_dir(entry: str, bots_dirs: list[Path]) -> Path:
    """A pool entry (a name under one of the bots dirs, or a path) -> its bot directory."""
    candidates = [Path(entry)] if "/" in entry else [root / entry for root in bots_dirs]
    for folder in candidates:
        if (folder / f"{folder.name}.json").is_file() or (folder / f"{folder.name}.sh").is_file():
            return folder
    where = ", ".join(str(c) for c in candidates)
    raise UserError(f"opponent {entry!r}: no bot directory found (looked in {where})", exit_code=2)


def default_bots_dirs(campaign_dirs: list[Path]) -> list[Path]:
    """The file's bot dirs, then the project's own `bots/` (an editable install's checkout)."""
    from sacbot.runtime.paths import repo_bot_dir

    own = repo_bot_dir().parent
    dirs = list(campaign_dirs)
    if own.is_dir() and all(d.resolve() != own for d in dirs if d.exists()):
        dirs.append(own)
    return dirs


class GameSelection(Protocol):
    """The embedded arena's recorder, recording the games it is armed for
    (`sacbot.viewer.recording.SelectedGames`)."""

    def start_game(self) -> None: ...

    def record(self, text: str) -> None: ...

    def end_game(self) -> None: ...

    def arm(self, kind: str, label: str) -> bool: ...

    def settle(self) -> None: ...

    def close(self) -> None: ...


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


class ArenaBackend:
    """Runs chunks and eval games as real processes on an arena (embedded, or a server at a URL)."""

    def __init__(self, campaign: Campaign, paths: RunPaths, recorder: GameSelection | None = None) -> None:
        """`recorder` (the embedded arena's) records the games it selects (`[record]`, `eval --record`)."""
        self.campaign = campaign
        self.paths = paths
        self.bots_dirs = default_bots_dirs(list(campaign.bots_dirs))
        self.sacbot_dir = campaign.sacbot_dir or resolve_bot_dir("SacBot", self.bots_dirs)
        from sacbot.arena.booter import read_bot_dir

        self.sacbot_name = read_bot_dir(self.sacbot_dir).name
        # Every opponent must exist before the first chunk, not hours later when the sampler first draws it.
        for entry in [*campaign.opponents, *campaign.eval.opponents]:
            resolve_bot_dir(entry, self.bots_dirs)
        self._faults = parse_faults(os.environ.get(FAULTS_ENV))
        self._arena: Any = None
        self._arena_secrets = (secrets.token_hex(8), secrets.token_hex(8))  # (controller, bot)
        self._attempts: dict[int, int] = {}
        self._report: Reporter = lambda event: None
        if recorder is not None and not campaign.server.embedded:
            raise UserError("recording needs the embedded arena (no server url)", 2)
        self._recorder = recorder

    # -- server -------------------------------------------------------------------------------------------
    def _server(self) -> tuple[str, str | None, str | None]:
        cfg = self.campaign.server
        if not cfg.embedded:
            assert cfg.url is not None
            return cfg.url, cfg.controller_secret, cfg.bot_secret
        if self._arena is not None and not self._arena_alive():
            self._report({"event": "server_restart", "reason": "the embedded arena stopped"})
            self._stop_arena()
        if self._arena is None:
            from sacbot.arena.server import EmbeddedArena

            controller, bot = self._arena_secrets
            self._arena = EmbeddedArena(
                bot_secrets={bot},
                controller_secrets={controller},
                tps=cfg.tps,
                seed=self.campaign.seed,
                recorder=self._recorder,
            ).start()
        return self._arena.url, *self._arena_secrets

    def _arena_alive(self) -> bool:
        thread = getattr(self._arena, "_thread", None)
        return thread is not None and thread.is_alive()

    def _stop_arena(self) -> None:
        if self._arena is not None:
            try:
                self._arena.stop()
            finally:
                self._arena = None

    def _crash_arena(self) -> None:
        # Fault injection: the server goes away under the game; the reference stays, so the next attempt
        # finds a dead arena and restarts it like after a real crash.
        arena = self._arena
        if arena is not None:
            # From another thread: the caller is the controller's loop, which must stay free to answer.
            threading.Thread(target=arena.stop, name="sacbot-fault-server-crash", daemon=True).start()

    def close(self) -> None:
        try:
            self._stop_arena()
        finally:
            if self._recorder is not None:
                self._recorder.close()

    # -- chunks and evals -----------------------------------------------------------------------------------
    def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Reporter) -> ChunkOutcome:
        self._report = report
        attempt = self._attempts[chunk] = self._attempts.get(chunk, 0) + 1
        weights = self.paths.weights
        weights.folder.mkdir(parents=True, exist_ok=True)
        env = {
            **self.campaign.bot.environment(),
            "SACBOT_WEIGHTS_DIR": str(weights.folder.resolve()),
            "SACBOT_OPPONENT": opponent_name(opponent),
            "SACBOT_EVAL_MODE": "0",
            "SACBOT_SEED": str(self.campaign.seed * 100_003 + chunk * 101 + attempt),
            "SACBOT_SHIPPED": "0",  # a campaign trains from its own checkpoints, or from scratch
        }
        if self.paths.latest.is_file():
            env["SACBOT_CHECKPOINT"] = str(self.paths.latest.resolve())  # resume the full training state
        if self.campaign.log.tensorboard is not None:
            env["SACBOT_TENSORBOARD"] = str(self.campaign.log.tensorboard.resolve())
        result = self._game(
            label=f"chunk-{chunk:05d}-a{attempt}",
            kind="chunk",
            opponent=opponent,
            rounds=rounds,
            bot_env=env,
            counter=weights.round_counter,
            fault=self._faults.get((chunk, attempt)),
            progress={"chunk": chunk, "attempt": attempt, "opponent": opponent_name(opponent)},
        )
        wins, _, share, _ = summarize_results(result.results, self.sacbot_name, result.rounds, result.wins)
        return ChunkOutcome(rounds=result.rounds, wins=wins, score_share=share, seconds=result.seconds)

    def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Reporter) -> GameScore:
        self._report = report
        eval_weights = self.paths.eval_weights.folder  # eval mode writes nothing; never the training folder
        eval_weights.mkdir(parents=True, exist_ok=True)
        env = {
            **self.campaign.bot.environment(),
            "SACBOT_WEIGHTS_DIR": str(eval_weights.resolve()),
            "SACBOT_OPPONENT": opponent_name(opponent),
            "SACBOT_EVAL_MODE": "1",
            "SACBOT_CHECKPOINT": str(checkpoint.resolve()),
            "SACBOT_SEED": str(self.campaign.seed),
        }
        after = RunPaths.candidate_chunk(checkpoint)
        result = self._game(
            label=f"eval-{opponent_name(opponent)}",
            record_label=f"eval-{after:05d}-{opponent_name(opponent)}" if after is not None else None,
            kind="eval",
            opponent=opponent,
            rounds=rounds,
            bot_env=env,
            counter=None,
            fault=None,
            progress={"eval": True, "opponent": opponent_name(opponent)},
        )
        wins, win_rate, share, damage = summarize_results(
            result.results, self.sacbot_name, result.rounds, result.wins
        )
        return GameScore(result.rounds, wins, win_rate, share, damage)

    def pretrain(self, report: Reporter) -> None:
        import subprocess

        cfg = self.campaign.pretrain
        assert cfg is not None
        pretrain = self.paths.pretrain
        out = pretrain.folder
        cmd = [
            sys.executable, "-m", "sacbot", "train-fast", "--opponents", cfg.opponents_arg(),
            "--steps", str(cfg.steps), "--envs", str(cfg.envs), "--out", str(out),
            "--seed", str(self.campaign.seed), "--updates-per-step", str(cfg.updates_per_step),
            "--torch-threads", str(cfg.torch_threads), "--teacher-lead", str(cfg.teacher_lead),
            "--rounds-per-game", str(cfg.rounds_per_game), "--sampling", cfg.sampling,
        ]  # fmt: skip
        if cfg.league is not None:
            league = cfg.league
            cmd += [
                "--snapshot-every", str(league.snapshot_every), "--snapshot-cap", str(league.snapshot_cap),
                "--snapshot-weight", str(league.snapshot_weight), "--pfsp-power", str(league.pfsp_power),
                "--pfsp-floor", str(league.pfsp_floor), "--pfsp-window", str(league.pfsp_window),
            ]  # fmt: skip
        if self.campaign.log.tensorboard is not None:
            cmd += ["--tensorboard", str(self.campaign.log.tensorboard.resolve())]
        ray = self.campaign.ray
        if ray is not None and ray.pretrain:  # the arenas in Ray env runners, this learner fed by them
            cmd += ["--ray", "--runners", str(ray.runners)]
            if ray.address:
                cmd += ["--ray-address", ray.address]
        report({"event": "pretrain_start", "command": " ".join(cmd)})
        self.paths.logs.mkdir(parents=True, exist_ok=True)
        log_path = self.paths.logs / "pretrain.log"
        with open(log_path, "ab") as log_file:  # stdout stays free for --json progress lines
            done = subprocess.run(
                cmd,
                check=False,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.campaign.bot.environment()},
            )
        if done.returncode == 2:
            raise UserError(f"pretrain: `sacbot train-fast` refused the settings (see {log_path})", 2)
        if done.returncode != 0:
            raise ChunkFailed(f"pretraining exited with code {done.returncode}")
        if pretrain.latest.is_file():
            from sacbot.campaign.loop import copy_tree_file

            # The replay first: `latest` is what marks the pretraining done, and the first chunk's bot
            # loads this replay (SACBOT_REPLAY_KEEP) instead of fitting its first two fresh rounds.
            if pretrain.replay.is_file():
                copy_tree_file(pretrain.replay, self.paths.weights.replay)
            copy_tree_file(pretrain.latest, self.paths.latest)

    # -- one game -------------------------------------------------------------------------------------------
    def _game(
        self,
        label: str,
        kind: str,
        opponent: str,
        rounds: int,
        bot_env: Mapping[str, str],
        counter: Path | None,
        fault: str | None,
        progress: dict[str, Any],
        record_label: str | None = None,
    ) -> WatchedGame:
        from sacbot.arena.booter import Booter, read_bot_dir

        opponent_dir = resolve_bot_dir(opponent, self.bots_dirs)
        opponent_bot = read_bot_dir(opponent_dir).name
        if opponent_bot == self.sacbot_name:
            raise UserError(f"opponent {opponent!r} reports the training bot's name {opponent_bot!r}", 2)
        url, controller_secret, bot_secret = self._server()
        recorder = self._recorder
        if recorder is not None:
            recorder.arm(kind, record_label or label)
        logs = self.paths.logs / label
        # SACBOT_CAMPAIGN_RUN marks every process of this run (to find them; tests look for orphans).
        common = {"SACBOT_PYTHON": sys.executable, "SACBOT_CAMPAIGN_RUN": str(self.paths.out.resolve())}
        # Two booters, because the training bot's settings must not reach the opponent.
        opponents = Booter(url, bot_secret, log_dir=logs, extra_env=common)
        trainee = Booter(url, bot_secret, log_dir=logs, extra_env={**common, **bot_env})
        try:
            procs = opponents.boot(opponent_dir) + trainee.boot(self.sacbot_dir)
            watch = _GameWatch(
                campaign=self.campaign,
                url=url,
                controller_secret=controller_secret,
                names=(self.sacbot_name, opponent_bot),
                rounds=rounds,
                procs=procs,
                bot_pid=procs[-1].pid,
                counter=counter,
                weights=WeightsPaths.of(bot_env["SACBOT_WEIGHTS_DIR"]),
                fault=fault,
                crash_server=self._crash_arena,
                arena_alive=self._arena_alive if self.campaign.server.embedded else lambda: True,
                report=lambda event: self._report({**progress, **event}),
            )
            return asyncio.run(watch.run())
        finally:
            for booter in (trainee, opponents):
                for proc in booter.bots:
                    _signal_group(proc.pid, signal.SIGCONT)  # a frozen bot must be able to act on SIGTERM
                booter.stop_all()
            if recorder is not None:
                recorder.settle()


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _GameWatch:
    """One game through the arena's controller client, with the liveness rule and process checks."""

    def __init__(
        self,
        campaign: Campaign,
        url: str,
        controller_secret: str | None,
        names: tuple[str, str],
        rounds: int,
        procs: list[Any],
        bot_pid: int,
        counter: Path | None,
        weights: WeightsPaths,
        fault: str | None,
        crash_server: Callable[[], None],
        arena_alive: Callable[[], bool],
        report: Reporter,
    ) -> None:
        self.campaign = campaign
        self.url = url
        self.secret = controller_secret
        self.names = names
        self.rounds = rounds
        self.procs = procs
        self.bot_pid = bot_pid
        self.counter = counter
        self.fault = fault
        self.faulted = False
        self.crash_server = crash_server
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
            if self.fault and not self.faulted:
                self.faulted = True
                self._inject(self.fault)
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

    def _inject(self, fault: str) -> None:
        self.report({"event": "fault_injected", "fault": fault})
        if fault == "kill_bot":
            _signal_group(self.bot_pid, signal.SIGKILL)
        elif fault == "hang_bot":
            _signal_group(self.bot_pid, signal.SIGSTOP)
        elif fault == "server_crash":
            self.crash_server()


def _as_dict(result: Any) -> dict[str, Any]:
    from sacbot.protocol import to_dict

    return result if isinstance(result, dict) else to_dict(result)
