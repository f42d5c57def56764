"""The layout of a weights folder and of a campaign run folder: every file and folder name, defined once.

A weights folder (`sacbot play`'s SACBOT_WEIGHTS_DIR, a bot directory's `weights/`, a `sacbot train-fast
--out` folder, a campaign run's `weights/`, `pretrain/` and `stage-<name>/`):
    latest.zip, best.zip, opponents/<Opponent>.zip   the checkpoint slots (`sacbot.checkpoint.slots`)
    replay.npz               the replay kept across processes (`sacbot.checkpoint.replay_file`)
    training_metrics.jsonl   one line per train pass or save (`sacbot.records.MetricsLine`)
    rounds.jsonl             one line per round (`sacbot.records.RoundLine`)
    round_counter.json       the rounds saved so far (`sacbot.records.RoundCounter`): a campaign's liveness
                             signal
    league.jsonl, league/    train-fast's league: its log and its `FastSnap<n>.zip` snapshots
                             (`sacbot.env.league`)

A campaign run folder (`sacbot train-campaign`'s `--out`):
    weights/                 the training bot's weights folder
    campaign_log.jsonl       one `sacbot.records.CampaignEvent` per line
    eval_log.jsonl           one `sacbot.records.EvalRecord` per line
    best_score.json          the global best's score for people (`sacbot.records.BestScore`; best.zip's
                             metadata is the truth); older runs have it as the text file `best_score`
    eval/                    the candidate being evaluated, and `weights/`, the eval bot's (eval mode writes
                             nothing there)
    logs/                    the bots' output per game, `pretrain.log`, `stage-<name>.log`
    league/                  the league's frozen snapshots, `SacSnap<chunk>/` bot directories
    pretrain/                the pretraining phase's weights folder (`sacbot train-fast --out`)
    stage-<name>/            each `[[pretrain.stages]]` fine-tune's weights folder, the same way
    recordings/              with `[record]`: battle recordings of its games,
                             `game-<time>-chunk-<chunk>-a<attempt>.battle.gz` and
                             `game-<time>-eval-<chunk>-<Opponent>.battle.gz` (`sacbot.viewer.recording`)
    report/                  `sacbot report`'s output
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# -- a weights folder ---------------------------------------------------------------------------------------
LATEST = "latest"  # slot names: a slot's file is <name><SLOT_SUFFIX>
BEST = "best"
SLOT_SUFFIX = ".zip"
OPPONENTS_DIR = "opponents"
REPLAY = "replay.npz"
TRAINING_METRICS = "training_metrics.jsonl"
ROUNDS = "rounds.jsonl"
ROUND_COUNTER = "round_counter.json"
LEAGUE_LOG = "league.jsonl"
LEAGUE_DIR = "league"  # train-fast's snapshots (weights folder); the league's snapshot bots (run folder)

# -- a campaign run folder ----------------------------------------------------------------------------------
WEIGHTS_DIR = "weights"  # also a bot directory's own weights folder
CAMPAIGN_LOG = "campaign_log.jsonl"
EVAL_LOG = "eval_log.jsonl"
BEST_SCORE = "best_score.json"
LEGACY_BEST_SCORE = "best_score"  # the text mirror older runs wrote (`<score> <kind> chunk <n> <time>`)
EVAL_DIR = "eval"
LOGS_DIR = "logs"
PRETRAIN_DIR = "pretrain"
STAGE_PREFIX = "stage-"
REPORT_DIR = "report"
RECORDINGS_DIR = "recordings"
CANDIDATE_PREFIX = "candidate-"


@dataclass(frozen=True)
class WeightsPaths:
    """The files of the weights folder `folder`."""

    folder: Path

    @classmethod
    def of(cls, folder: str | os.PathLike[str]) -> WeightsPaths:
        return cls(Path(folder))

    def slot(self, name: str) -> Path:
        """`latest` or `best` (an opponent's slot: `opponent`)."""
        return self.folder / (name + SLOT_SUFFIX)

    @property
    def latest(self) -> Path:
        return self.slot(LATEST)

    @property
    def best(self) -> Path:
        return self.slot(BEST)

    @property
    def opponents(self) -> Path:
        return self.folder / OPPONENTS_DIR

    def opponent(self, name: str) -> Path:
        """The best slot against `name`, which must be a valid opponent name
        (`sacbot.checkpoint.slots.opponent_best_path` checks it)."""
        return self.opponents / (name + SLOT_SUFFIX)

    @property
    def replay(self) -> Path:
        return self.folder / REPLAY

    @property
    def training_metrics(self) -> Path:
        return self.folder / TRAINING_METRICS

    @property
    def rounds(self) -> Path:
        return self.folder / ROUNDS

    @property
    def round_counter(self) -> Path:
        return self.folder / ROUND_COUNTER

    @property
    def league_log(self) -> Path:
        return self.folder / LEAGUE_LOG

    @property
    def league(self) -> Path:
        return self.folder / LEAGUE_DIR


@dataclass(frozen=True)
class RunPaths:
    """Every file a campaign run writes lives under `out`."""

    out: Path

    @property
    def weights(self) -> WeightsPaths:
        return WeightsPaths(self.out / WEIGHTS_DIR)

    @property
    def latest(self) -> Path:
        """The training bot's `latest` slot: the campaign's training state."""
        return self.weights.latest

    @property
    def best(self) -> Path:
        """The training bot's `best` slot: the campaign's global best."""
        return self.weights.best

    @property
    def campaign_log(self) -> Path:
        return self.out / CAMPAIGN_LOG

    @property
    def eval_log(self) -> Path:
        return self.out / EVAL_LOG

    @property
    def best_score(self) -> Path:
        return self.out / BEST_SCORE

    @property
    def legacy_best_score(self) -> Path:
        return self.out / LEGACY_BEST_SCORE

    @property
    def eval_dir(self) -> Path:
        return self.out / EVAL_DIR

    def candidate(self, chunk: int) -> Path:
        """The frozen copy of `latest` that the eval after `chunk` scores (and, if it wins, promotes)."""
        return self.eval_dir / f"{CANDIDATE_PREFIX}{chunk:05d}{SLOT_SUFFIX}"

    @staticmethod
    def candidate_chunk(path: Path) -> int | None:
        """The chunk of a `candidate(chunk)` file; None for any other file."""
        digits = path.name.removeprefix(CANDIDATE_PREFIX).removesuffix(SLOT_SUFFIX)
        return int(digits) if path.name.startswith(CANDIDATE_PREFIX) and digits.isdigit() else None

    @property
    def recordings(self) -> Path:
        """`[record]`'s battle recordings of the run's games."""
        return self.out / RECORDINGS_DIR

    @property
    def eval_weights(self) -> WeightsPaths:
        """The eval bot's weights folder (eval mode writes nothing; never the training bot's folder)."""
        return WeightsPaths(self.eval_dir / WEIGHTS_DIR)

    @property
    def logs(self) -> Path:
        return self.out / LOGS_DIR

    @property
    def league(self) -> Path:
        """The league's bot directories (frozen snapshots of `latest`, `SacSnap<chunk>/`)."""
        return self.out / LEAGUE_DIR

    @property
    def pretrain(self) -> WeightsPaths:
        return WeightsPaths(self.out / PRETRAIN_DIR)

    def stage(self, name: str) -> WeightsPaths:
        """A pretraining stage's weights folder."""
        return WeightsPaths(self.out / f"{STAGE_PREFIX}{name}")

    @property
    def report(self) -> Path:
        return self.out / REPORT_DIR
