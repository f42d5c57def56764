"""The process shell of a campaign: one game (a training chunk or an eval game) on an arena, and pretraining.

`ArenaBackend` is the campaign loop's `Backend` for real games, composed from one-job parts. Per game:
make sure the server is up (`arena_lifecycle`), boot the opponent's directory and the training bot's
directory with their environments (`bot_env`), and watch the game (`watch`), which applies the liveness
rule and notices a bot process that exits early or a server that goes away; any of these stops exactly the
processes this game started and raises `ChunkFailed`, which the campaign loop retries from the `latest`
checkpoint. Test-only fault injection (`faults`) plugs in at one point: the hook a chunk's watch calls when
round 1 has ended.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sacbot.campaign.arena_lifecycle import ArenaServer, GameSelection
from sacbot.campaign.bot_env import BotDirs, chunk_env, eval_env, game_booters, stop_bots
from sacbot.campaign.config import Campaign, PretrainConfig, StageConfig, opponent_name
from sacbot.campaign.faults import Fault, FaultPlan
from sacbot.campaign.loop import ChunkFailed, ChunkOutcome, GameScore, Reporter
from sacbot.campaign.scoring import summarize_results
from sacbot.campaign.watch import GameWatch, WatchedGame
from sacbot.errors import UserError
from sacbot.opponents.sampling import LeagueConfig
from sacbot.rundir import RunPaths, WeightsPaths

PRETRAIN_STOP_S = 120.0  # how long an interrupted pretraining may take to save before it is killed
PROGRESS_S = 10.0  # how often a running pretraining or stage is looked at for a `pretrain_progress` event


class ArenaBackend:
    """Runs chunks and eval games as real processes on an arena (embedded, or a server at a URL)."""

    def __init__(
        self,
        campaign: Campaign,
        paths: RunPaths,
        recorder: GameSelection | None = None,
        faults: FaultPlan | None = None,
    ) -> None:
        """`recorder` (the embedded arena's) records the games it selects (`[record]`, `eval --record`).
        `faults` (tests) injects faults into chunks; without it, the plan in `SACBOT_CAMPAIGN_FAULTS`."""
        self.campaign = campaign
        self.paths = paths
        self.bots = BotDirs(campaign)
        self._faults = faults if faults is not None else FaultPlan.from_env()
        self.server = ArenaServer(campaign, recorder)
        self._attempts: dict[int, int] = {}
        self._report: Reporter = lambda event: None

    def close(self) -> None:
        self.server.close()

    # -- chunks and evals -----------------------------------------------------------------------------------
    def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Reporter) -> ChunkOutcome:
        self._report = report
        attempt = self._attempts[chunk] = self._attempts.get(chunk, 0) + 1
        weights = self.paths.weights
        weights.folder.mkdir(parents=True, exist_ok=True)
        result = self._game(
            label=f"chunk-{chunk:05d}-a{attempt}",
            kind="chunk",
            opponent=opponent,
            rounds=rounds,
            bot_env=chunk_env(self.campaign, self.paths, chunk, attempt, opponent),
            counter=weights.round_counter,
            fault=self._faults.at(chunk, attempt) if self._faults is not None else None,
            progress={"chunk": chunk, "attempt": attempt, "opponent": opponent_name(opponent)},
        )
        wins, _, share, _ = summarize_results(
            result.results, self.bots.sacbot_name, result.rounds, result.wins
        )
        return ChunkOutcome(rounds=result.rounds, wins=wins, score_share=share, seconds=result.seconds)

    def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Reporter) -> GameScore:
        self._report = report
        self.paths.eval_weights.folder.mkdir(parents=True, exist_ok=True)
        after = RunPaths.candidate_chunk(checkpoint)
        result = self._game(
            label=f"eval-{opponent_name(opponent)}",
            record_label=f"eval-{after:05d}-{opponent_name(opponent)}" if after is not None else None,
            kind="eval",
            opponent=opponent,
            rounds=rounds,
            bot_env=eval_env(self.campaign, self.paths, checkpoint, opponent),
            counter=None,
            fault=None,
            progress={"eval": True, "opponent": opponent_name(opponent)},
        )
        wins, win_rate, share, damage = summarize_results(
            result.results, self.bots.sacbot_name, result.rounds, result.wins
        )
        return GameScore(result.rounds, wins, win_rate, share, damage)

    def pretrain(self, report: Reporter) -> None:
        """The pretraining, then its stages in order, each resumed where its folder stands; the last one's
        weights (and replay) become the run's `latest`."""
        cfg = self.campaign.pretrain
        assert cfg is not None
        from sacbot.env.fast_saver import resumed_meta

        phase = self.paths.pretrain
        # train-fast's --steps are more steps from where its folder stands: a resumed pretraining gets what is
        # left of the file's budget, and one already at its budget (stopped before its weights were copied)
        # runs no more.
        done = resumed_meta(phase.folder)  # None: nothing yet (a damaged one: train-fast's own error line)
        left = cfg.steps - (0 if done is None else done.env_steps)
        if left > 0:
            self._run_pretraining(cfg, left, report)
        for index, stage in enumerate(cfg.stages):
            phase = self._run_stage(cfg, index, stage, phase.latest, report)
        if phase.latest.is_file():
            from sacbot.campaign.loop import copy_tree_file

            # The replay first: `latest` is what marks the pretraining done, and the first chunk's bot
            # loads this replay (SACBOT_REPLAY_KEEP) instead of fitting its first two fresh rounds.
            if phase.replay.is_file():
                copy_tree_file(phase.replay, self.paths.weights.replay)
            copy_tree_file(phase.latest, self.paths.latest)

    def _run_pretraining(self, cfg: PretrainConfig, steps: int, report: Reporter) -> None:
        cmd = [
            "--steps", str(steps), "--teacher-lead", str(cfg.teacher_lead), "--sampling", cfg.sampling,
            *_league_options(cfg.league),
        ]  # fmt: skip
        ray = self.campaign.ray
        if ray is not None and ray.pretrain:  # the arenas in Ray env runners, this learner fed by them
            cmd += ["--ray", "--runners", str(ray.runners)]
            if ray.address:
                cmd += ["--ray-address", ray.address]
        env = self.campaign.bot_for(0).environment()
        out = self.paths.pretrain.folder
        self._train_fast("pretrain", out, self.campaign.seed, cmd, env, report, cfg.steps)

    def _run_stage(
        self, cfg: PretrainConfig, index: int, stage: StageConfig, before: Path, report: Reporter
    ) -> WeightsPaths:
        """One stage: from the actor of `before` (the phase before's latest) over fresh critics, its steps in
        `stage.runs` train-fast runs; each run (and a resumed one) goes to the next of their ends."""
        from sacbot.checkpoint import read_meta
        from sacbot.env.fast_saver import resumed_meta

        label = f"stage-{stage.name}"
        phase = self.paths.stage(stage.name)
        start = read_meta(before) if before.is_file() else None
        if start is None:
            raise ChunkFailed(f"{label}: the phase before it left no weights at {before}")
        env = {
            **self.campaign.bot_for(index + 1).environment(),
            "SACBOT_CRITIC_WARMUP": str(start.updates + stage.critic_warmup),
        }
        seed = self.campaign.seed + index + 1
        for run in range(1, stage.runs + 1):
            end = start.env_steps + stage.steps * run // stage.runs
            done = resumed_meta(phase.folder)
            left = end - (start.env_steps if done is None else done.env_steps)
            if left > 0:
                cmd = [
                    "--steps", str(left), "--start-actor", str(before),
                    "--sampling", cfg.stage_sampling(stage), *_league_options(stage.league),
                ]  # fmt: skip
                self._train_fast(label, phase.folder, seed, cmd, env, report, end)
        return phase

    def _train_fast(
        self,
        label: str,
        out: Path,
        seed: int,
        options: list[str],
        env: dict[str, str],
        report: Reporter,
        until: int,
    ) -> None:
        """One `sacbot train-fast` run of the pretraining phase into `out`, with the pretraining's arenas,
        opponents and rates, its output in `logs/<label>.log`; a `pretrain_progress` event (env steps and
        updates of the folder's latest save, of `until` env steps) as each save lands and when it ends."""
        import subprocess

        from sacbot.env.fast_saver import resumed_meta

        cfg = self.campaign.pretrain
        assert cfg is not None
        cmd = [
            sys.executable, "-m", "sacbot", "train-fast", "--opponents", cfg.opponents_arg(),
            "--envs", str(cfg.envs), "--out", str(out), "--seed", str(seed),
            "--updates-per-step", str(cfg.updates_per_step), "--torch-threads", str(cfg.torch_threads),
            "--rounds-per-game", str(cfg.rounds_per_game), *options,
        ]  # fmt: skip
        if self.campaign.log.tensorboard is not None:
            cmd += ["--tensorboard", str(self.campaign.log.tensorboard.resolve())]
        event = {"event": "pretrain_start", "command": " ".join(cmd)}
        report(event if label == "pretrain" else {**event, "name": label})
        self.paths.logs.mkdir(parents=True, exist_ok=True)
        log_path = self.paths.logs / f"{label}.log"
        with open(log_path, "ab") as log_file:  # stdout stays free for --json progress lines
            full_env = {**os.environ, **env, "SACBOT_CAMPAIGN_RUN": str(self.paths.out.resolve())}
            proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=full_env)
            shown: tuple[int, int] | None = None

            def progress() -> None:
                nonlocal shown
                meta = resumed_meta(out)
                now = None if meta is None else (meta.env_steps, meta.updates)
                if now is not None and now != shown:
                    shown = now
                    report({"event": "pretrain_progress", "name": label, "env_steps": now[0]}
                           | {"updates": now[1], "until": until})  # fmt: skip

            try:
                while True:
                    try:
                        returncode = proc.wait(PROGRESS_S)
                        break
                    except subprocess.TimeoutExpired:
                        progress()
                progress()
            except KeyboardInterrupt:
                # Ctrl-C reached train-fast too (one process group), SIGTERM to the campaign reaches it here:
                # either way it saves where it stands and keeps its replay, so the re-run resumes from there.
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(PRETRAIN_STOP_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                raise
        if returncode == 2:
            raise UserError(f"{label}: `sacbot train-fast` refused the settings (see {log_path})", 2)
        if returncode != 0:
            raise ChunkFailed(f"{label} exited with code {returncode}")

    # -- one game -------------------------------------------------------------------------------------------
    def _game(
        self,
        label: str,
        kind: str,
        opponent: str,
        rounds: int,
        bot_env: Mapping[str, str],
        counter: Path | None,
        fault: Fault | None,
        progress: dict[str, Any],
        record_label: str | None = None,
    ) -> WatchedGame:
        opponent_dir, opponent_bot = self.bots.opponent(opponent)
        url, controller_secret, bot_secret = self.server.address(self._report)
        recorder = self.server.recorder
        if recorder is not None:
            recorder.arm(kind, record_label or label)
        opponents, trainee = game_booters(url, bot_secret, self.paths.logs / label, self.paths, bot_env)
        try:
            procs = opponents.boot(opponent_dir) + trainee.boot(self.bots.sacbot_dir)

            def report(event: dict[str, Any]) -> None:
                self._report({**progress, **event})

            watch = GameWatch(
                campaign=self.campaign,
                url=url,
                controller_secret=controller_secret,
                names=(self.bots.sacbot_name, opponent_bot),
                rounds=rounds,
                procs=procs,
                counter=counter,
                weights=WeightsPaths.of(bot_env["SACBOT_WEIGHTS_DIR"]),
                arena_alive=self.server.alive,
                report=report,
                after_round_1=fault.arm(procs[-1].pid, self.server, report) if fault is not None else None,
            )
            return asyncio.run(watch.run())
        finally:
            stop_bots(trainee, opponents)
            if recorder is not None:
                recorder.settle()


def _league_options(league: LeagueConfig | None) -> list[str]:
    """train-fast's league options for `league` (none without one)."""
    if league is None:
        return []
    return [
        "--snapshot-every", str(league.snapshot_every), "--snapshot-cap", str(league.snapshot_cap),
        "--snapshot-weight", str(league.snapshot_weight), "--pfsp-power", str(league.pfsp_power),
        "--pfsp-floor", str(league.pfsp_floor), "--pfsp-window", str(league.pfsp_window),
        "--pfsp-curve", league.pfsp_curve, "--pfsp-revisit", str(league.pfsp_revisit),
    ]  # fmt: skip
