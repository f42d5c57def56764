"""Campaign files (`campaigns/*.toml`): the pydantic model and its loader.

A bad file ends in one `UserError` line naming the field (`opponents.Walls: ...`), never a traceback.
Relative paths in a file resolve against the current working directory, like every other path a user types.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sacbot.agent.features import RadarMode
from sacbot.agent.inference import ActionMode
from sacbot.agent.options import HindsightDistance, HindsightTarget, TeacherGun, WaveAim
from sacbot.errors import UserError
from sacbot.opponents.sampling import LeagueConfig

TEACHER_ARENA = (800, 600)  # the geometry sacbot.agent.teacher (TrainerConfig's default) plays in
GameType = Literal["classic", "1v1", "melee", "twinduel", "custom"]


class _Strict(BaseModel):
    # A typo in a campaign file should be an error, not a silently ignored key.
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(_Strict):
    """Embedded arena by default; `url` points at a running Tank Royale (or `sacbot arena serve`) server."""

    url: str | None = None
    controller_secret: str | None = None
    bot_secret: str | None = None
    # Turns per second; -1 runs unthrottled (training wants that).
    tps: int = Field(default=-1, ge=-1, le=999)

    @field_validator("url")
    @classmethod
    def _ws_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("ws://", "wss://")):
            raise ValueError("must start with ws:// or wss://")
        return value

    @property
    def embedded(self) -> bool:
        return self.url is None


class GameConfig(_Strict):
    type: GameType = "1v1"
    # GameSetup overrides in snake_case (e.g. turn_timeout = 30000); checked when a game starts.
    setup: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_fields(self) -> GameConfig:
        from sacbot.engine import game_setup_for

        try:
            game_setup_for(self.type, **self.setup)
        except UserError as exc:
            raise ValueError(f"setup: {exc}") from None
        return self


class ChunkConfig(_Strict):
    rounds: int = Field(..., ge=1, description="rounds per chunk (one game)")
    budget: int = Field(..., ge=1, description="chunks to complete")


class EvalConfig(_Strict):
    every: int = Field(default=0, ge=0, description="eval after every N completed chunks; 0 = never")
    rounds: int = Field(default=10, ge=1)
    opponents: list[str] = Field(default_factory=list)
    # What one eval of one opponent scores (the composite averages it per opponent, then over opponents).
    metric: Literal["score_share", "win_rate"] = "score_share"
    window: int = Field(default=5, ge=1, description="evals in each opponent's moving average")

    @model_validator(mode="after")
    def _needs_opponents(self) -> EvalConfig:
        if self.every > 0 and not self.opponents:
            raise ValueError("opponents: needs at least one eval opponent when every > 0")
        return self


class RetryConfig(_Strict):
    max_retries: int = Field(default=3, ge=0, description="retries per chunk after its first attempt")
    backoff_s: float = Field(default=1.0, ge=0)
    backoff_factor: float = Field(default=2.0, ge=1)
    backoff_max_s: float = Field(default=60.0, ge=0)


class LivenessConfig(_Strict):
    # Bots must connect and the game must start within this many seconds.
    boot_timeout_s: float = Field(default=60.0, gt=0)
    # Round events and the bot's round counter must each advance within this many seconds.
    round_timeout_s: float = Field(default=120.0, gt=0)


SNAPSHOT_PREFIX = "SacSnap"  # the campaign's frozen snapshots of `latest`: SacSnap<chunk>


def _check_weights(value: dict[str, float]) -> dict[str, float]:
    for name, weight in value.items():
        if not weight >= 0:  # also rejects NaN
            raise ValueError(f"{name}: weight must be >= 0")
    if sum(value.values()) <= 0:
        raise ValueError("at least one weight must be > 0")
    return value


class BotSettings(_Strict):
    """Opt-in settings of the training bot, for pretraining, real-time chunks and evals alike.

    Each one, when given, is passed on as its SACBOT_* variable (`sacbot.settings`); unset ones keep whatever
    the environment says. When neither sets them: no shaping, no teacher, and the radar mode a checkpoint was
    trained with (spin for a fresh start).
    """

    radar_mode: RadarMode | None = None
    aim_shaping: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    close_shaping: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)  # k of closing-in shaping
    surf_shaping: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)  # k of surf shaping
    kickstart: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    # learner updates until the weight reaches the floor (0, unless kickstart_floor says), fading from the
    # update kickstart_anneal_from on (0: from the start)
    kickstart_anneal: int | None = Field(default=None, ge=0)
    kickstart_anneal_from: int | None = Field(default=None, ge=0)
    kickstart_floor: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    kickstart_filter: bool | None = None  # the Q-filter: imitate only where the critics prefer the teacher
    # the term on the movement entries (turn, speed) times this, against the gun's (1: the same)
    kickstart_movement: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    kickstart_movement_from: int | None = Field(default=None, ge=0)  # ... from this update on (0: the start)
    teacher_surf: bool | None = None  # the teacher's speed surfs the enemy's waves (needs threat_inputs)
    teacher_gun: TeacherGun | None = None  # "wave": the teacher aims at the wave inputs' peak (needs them)
    # the actor held toward the one its train-fast run (or game) started from, this weight (0: off), its turn
    # and speed entries at anchor_movement of the gun's
    anchor: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    anchor_movement: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    # toward the replay's own actions where the critics rate them above the actor's mean (0: off)
    self_imitation: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    # toward the gun turn that would have hit, the step before each shot, found after the round (0: off)
    hindsight_aim: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    hindsight_steps: int | None = Field(default=None, ge=1, le=16)  # ... on this many steps before a shot
    # ... and its trigger label at this share of that weight (0: none)
    hindsight_trigger: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    # ... toward the labels' mean, median or (the gun's) densest side
    hindsight_distance: HindsightDistance | None = None
    # ... the steps before the aiming step toward the shot's direction or the enemy's bearing plus its offset
    hindsight_target: HindsightTarget | None = None
    n_step: int | None = Field(default=None, ge=1, le=16)  # n-step soft targets (1: one-step SAC)
    angle_inputs: bool | None = None  # the networks also read sin/cos of four angles of the state
    energy_inputs: bool | None = None  # ... and the enemy's energy as a phase (its shots stand out)
    lead_inputs: bool | None = None  # ... and where a linear aim points (the teacher's gun)
    wave_inputs: bool | None = None  # ... and how the enemy answered our past shots this game
    threat_inputs: bool | None = None  # ... and the enemy's shots in flight, where its bullets hit us
    bullet_inputs: bool | None = None  # the critics alone also read where our bullets in flight are
    gun_offset: bool | None = None  # the gun entry: where it points from the enemy's bearing, not a turn
    # the wave inputs' histogram: each wave's weight of the next (unset: the checkpoint's, else 0.97)
    wave_decay: float | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)
    # the wave inputs' aim entry: the histogram's peak, or it or a linear aim, whichever hit more (virtual)
    wave_aim: WaveAim | None = None
    # the threat inputs' shares: the visits' weight, where we were as enemy waves passed us (unset: the
    # checkpoint's, else 0: hits only)
    threat_visits: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    # the policy's bound on log std before tanh (unset: the checkpoint's, else 2.0)
    log_std_max: float | None = Field(default=None, ge=-5.0, le=2.0, allow_inf_nan=False)
    # the entropy the temperature is tuned toward (unset: minus the action's size, -4)
    target_entropy: float | None = Field(default=None, ge=-40.0, le=10.0, allow_inf_nan=False)
    # real-time chunks only: training play draws every action entry with log std at least this
    behaviour_log_std_min: float | None = Field(default=None, ge=-5.0, le=2.0, allow_inf_nan=False)
    # real-time chunks only: this share of each batch from the chunk's own rounds, not the kept replay
    fresh_fraction: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    # training play's exploration noise coloured, 1/f**beta along the turns (0 white, 1 pink, 2 red)
    noise_beta: float | None = Field(default=None, ge=0.0, le=3.0, allow_inf_nan=False)
    # pretraining only (train-fast, the Ray runners): training play draws the gun turn this many times wider
    gun_spread: float | None = Field(default=None, ge=1.0, le=10.0, allow_inf_nan=False)
    eval_actions: ActionMode | None = None  # how evals act: the mean, all entries or the speed sampled

    def environment(self) -> dict[str, str]:
        """The SACBOT_* variables these settings stand for."""
        values = {
            "radar_mode": self.radar_mode,
            "aim_shaping": self.aim_shaping,
            "close_shaping": self.close_shaping,
            "surf_shaping": self.surf_shaping,
            "kickstart": self.kickstart,
            "kickstart_anneal": self.kickstart_anneal,
            "kickstart_anneal_from": self.kickstart_anneal_from,
            "kickstart_floor": self.kickstart_floor,
            "kickstart_movement": self.kickstart_movement,
            "kickstart_movement_from": self.kickstart_movement_from,
            "kickstart_filter": None if self.kickstart_filter is None else int(self.kickstart_filter),
            "teacher_surf": None if self.teacher_surf is None else int(self.teacher_surf),
            "teacher_gun": self.teacher_gun,
            "anchor": self.anchor,
            "anchor_movement": self.anchor_movement,
            "self_imitation": self.self_imitation,
            "hindsight_aim": self.hindsight_aim,
            "hindsight_steps": self.hindsight_steps,
            "hindsight_trigger": self.hindsight_trigger,
            "hindsight_distance": self.hindsight_distance,
            "hindsight_target": self.hindsight_target,
            "n_step": self.n_step,
            "angle_inputs": None if self.angle_inputs is None else int(self.angle_inputs),
            "energy_inputs": None if self.energy_inputs is None else int(self.energy_inputs),
            "lead_inputs": None if self.lead_inputs is None else int(self.lead_inputs),
            "wave_inputs": None if self.wave_inputs is None else int(self.wave_inputs),
            "threat_inputs": None if self.threat_inputs is None else int(self.threat_inputs),
            "bullet_inputs": None if self.bullet_inputs is None else int(self.bullet_inputs),
            "gun_offset": None if self.gun_offset is None else int(self.gun_offset),
            "wave_decay": self.wave_decay,
            "wave_aim": self.wave_aim,
            "threat_visits": self.threat_visits,
            "log_std_max": self.log_std_max,
            "target_entropy": self.target_entropy,
            "behaviour_log_std_min": self.behaviour_log_std_min,
            "fresh_fraction": self.fresh_fraction,
            "noise_beta": self.noise_beta,
            "gun_spread": self.gun_spread,
            "eval_actions": self.eval_actions,
        }
        return {f"SACBOT_{k.upper()}": str(v) for k, v in values.items() if v is not None}


class StageConfig(_Strict):
    """`[[pretrain.stages]]`: a fine-tune after the pretraining (or the stage before), in `stage-<name>/`.

    `sacbot train-fast --start-actor` from the phase before's actor over fresh critics (its counters kept),
    the critics learning alone for their first `critic_warmup` updates, on the pretraining's arenas,
    opponents and rates. Its `[pretrain.stages.bot]` changes the file's `[bot]` from this stage on: the
    stages after it, the real-time chunks and the evals take them too.
    """

    name: str = Field(..., pattern=r"^[A-Za-z0-9_-]+$", max_length=40)
    steps: int = Field(..., ge=1)  # env steps of this stage
    # The steps in this many train-fast runs, each resuming the one before (critics, replay and league go on;
    # an anchor is taken anew on the actor at the start of each).
    runs: int = Field(default=1, ge=1)
    critic_warmup: int = Field(default=2000, ge=0)  # updates that step the fresh critics alone
    # The league of its own runs (None: the opponents drawn as the pretraining's table or list says).
    league: LeagueConfig | None = None
    bot: BotSettings = Field(default_factory=BotSettings)


class PretrainConfig(_Strict):
    """A fast in-process pretraining phase (`sacbot train-fast`) before the first real-time chunk."""

    steps: int = Field(..., ge=1)
    envs: int = Field(default=8, ge=1)
    # A list: arena i plays opponents[i % n] ("spread"); a table name = weight: drawn per game by weight.
    opponents: list[str] | dict[str, float] = Field(..., min_length=1)
    updates_per_step: float = Field(default=1.0, ge=0.0)  # SAC updates per vector step (`--updates-per-step`)
    torch_threads: int = Field(default=1, ge=1)  # `--torch-threads`: nothing else runs during pretraining
    teacher_lead: int = Field(default=0, ge=0)  # `--teacher-lead`: first N steps played by the teacher
    rounds_per_game: int = Field(default=10, ge=1)  # `--rounds-per-game`: a new game (and draw) after them
    # `[pretrain.league]`: sampling per game (default "weights") and FastSnap snapshots every N env steps.
    league: LeagueConfig | None = None
    # `[[pretrain.stages]]`: fine-tunes after it, in order; the last one's weights start the chunks.
    stages: list[StageConfig] = Field(default_factory=list)

    @field_validator("opponents")
    @classmethod
    def _opponent_weights(cls, value: list[str] | dict[str, float]) -> list[str] | dict[str, float]:
        return _check_weights(value) if isinstance(value, dict) else value

    @field_validator("stages")
    @classmethod
    def _stage_names(cls, value: list[StageConfig]) -> list[StageConfig]:
        names = [stage.name for stage in value]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"two stages are called {name!r}")
        return value

    @property
    def sampling(self) -> str:
        """`train-fast --sampling`: the league's, else "weights" for a table, "spread" for a list."""
        return self._sampling(self.league)

    def opponents_arg(self) -> str:
        """`train-fast --opponents`: `A,B` for a list, `A:2,B:1` for a table."""
        if isinstance(self.opponents, dict):
            return ",".join(f"{name}:{weight:g}" for name, weight in self.opponents.items())
        return ",".join(self.opponents)

    def stage_sampling(self, stage: StageConfig) -> str:
        """A stage's `train-fast --sampling`: its own league's, else as the opponents say (no league)."""
        return self._sampling(stage.league)

    def _sampling(self, league: LeagueConfig | None) -> str:
        if league is not None:
            return league.sampling
        return "weights" if isinstance(self.opponents, dict) else "spread"


class LogConfig(_Strict):
    """What a run writes besides its JSONL logs."""

    # TensorBoard event files (the `tensorboard` extra) of the pretraining, every chunk's bot and the evals,
    # on one axis of environment steps. Relative paths resolve against the current directory.
    tensorboard: Path | None = None


class RecordConfig(_Strict):
    """`[record]`: battle recordings (`.battle.gz`) of the run's games, in its `recordings/` folder."""

    # Which games: the eval games, the training chunks, or both.
    games: Literal["evals", "chunks", "all"] = "evals"
    # The newest N recordings stay, older ones are deleted after each recorded game; 0 keeps every one.
    keep_last: int = Field(default=20, ge=0)

    def kinds(self) -> tuple[str, ...]:
        """The kinds of game recorded: "eval", "chunk"."""
        return {"evals": ("eval",), "chunks": ("chunk",), "all": ("eval", "chunk")}[self.games]


class RayConfig(_Strict):
    """`[ray]`: the pretraining's arenas in Ray env runners (`train-fast --ray`), each eval game a Ray task.

    Without `address` each phase starts a local Ray instance of its own; with one it joins that cluster (the
    bot folders and the run folder must then have the same paths on every node).
    """

    address: str | None = None  # `--ray-address`: "host:port" of a running cluster's head
    runners: int = Field(default=2, ge=1)  # `--runners`: env runners, `[pretrain] envs` arenas each
    pretrain: bool = True  # the pretraining's arenas on Ray
    evals: bool = True  # every eval's games at once, one Ray task each


class Campaign(_Strict):
    name: str = Field(..., min_length=1)
    out: Path | None = None
    seed: int = Field(default=0, ge=0)
    # Where opponent names are looked up, in order (`<dir>/<Name>/<Name>.json`).
    bots_dirs: list[Path] = Field(default_factory=lambda: [Path("bots")])
    # The training bot's directory (default: `SacBot` found in bots_dirs).
    sacbot_dir: Path | None = None
    # A checkpoint to start from when the run has no `latest` yet (else pretraining, else a fresh init).
    start_from: Path | None = None
    server: ServerConfig = Field(default_factory=ServerConfig)
    game: GameConfig = Field(default_factory=GameConfig)
    chunks: ChunkConfig
    # The training pool: opponent name (or bot directory path) -> sampling weight.
    opponents: dict[str, float] = Field(..., min_length=1)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    liveness: LivenessConfig = Field(default_factory=LivenessConfig)
    pretrain: PretrainConfig | None = None
    bot: BotSettings = Field(default_factory=BotSettings)
    log: LogConfig = Field(default_factory=LogConfig)
    # The league: PFSP sampling, frozen SacSnap<chunk> snapshots of `latest` in the pool (None: weights only).
    league: LeagueConfig | None = None
    # Battle recordings of the run's games (None: none), on the embedded arena.
    record: RecordConfig | None = None
    # Pretraining and evals through Ray (the `ray` extra; None: all on this machine).
    ray: RayConfig | None = None

    @field_validator("opponents")
    @classmethod
    def _weights(cls, value: dict[str, float]) -> dict[str, float]:
        for name in value:
            if opponent_name(name) == "SacBot":
                raise ValueError(
                    f"{name}: the training bot cannot be its own opponent; use `sacbot make-twin`"
                )
        return _check_weights(value)

    @model_validator(mode="after")
    def _league_pool(self) -> Campaign:
        if self.league is None:
            return self
        seen: dict[str, str] = {}
        for entry in self.opponents:
            name = opponent_name(entry)
            if name in seen:
                raise ValueError(
                    f"opponents: {seen[name]!r} and {entry!r} are both called {name!r} in the league"
                )
            seen[name] = entry
            if self.league.snapshot_every > 0 and name.startswith(SNAPSHOT_PREFIX):
                raise ValueError(
                    f"opponents: {entry}: names starting with {SNAPSHOT_PREFIX} are the league's"
                )
        return self

    @model_validator(mode="after")
    def _record_embedded(self) -> Campaign:
        if self.record is not None and not self.server.embedded:
            raise ValueError("record: the embedded arena records games; remove server.url or [record]")
        return self

    @model_validator(mode="after")
    def _ray_phases(self) -> Campaign:
        ray = self.ray
        if ray is None:
            return self
        if ray.evals and not self.server.embedded:
            raise ValueError("ray.evals: each eval game on Ray runs an embedded arena; remove server.url")
        if ray.evals and self.record is not None and "eval" in self.record.kinds():
            raise ValueError("ray.evals: [record] records games on this machine; record chunks only")
        pre = self.pretrain
        if ray.pretrain and pre is not None:
            # What `train-fast --ray` does not take (its arenas live in the runners).
            if pre.teacher_lead:
                raise ValueError("ray.pretrain: teacher-led steps run on this machine; set teacher_lead = 0")
            if pre.league is not None:
                raise ValueError("ray.pretrain: the runners play a fixed list; remove [pretrain.league]")
            if pre.sampling != "spread":
                raise ValueError("ray.pretrain: the runners play a list of opponents (spread), not a table")
            if self.log.tensorboard is not None:
                raise ValueError("ray.pretrain: no TensorBoard scalars from Ray runners; remove [log]")
        return self

    def eval_game_data(self) -> dict[str, Any]:
        """This campaign as one eval game's campaign data, for another process or node (a Ray task): its
        game, bot settings, server, liveness and bot folders (made absolute), none of its training phases."""
        data = self.model_dump(
            mode="json", exclude={"out", "start_from", "pretrain", "league", "record", "ray", "log"}
        )
        data["bots_dirs"] = [str(d.resolve()) for d in self.bots_dirs]
        data["opponents"] = {_absolute(e): 1.0 for e in self.eval.opponents} or data["opponents"]
        data["eval"]["opponents"] = [_absolute(e) for e in self.eval.opponents]
        if self.sacbot_dir is not None:
            data["sacbot_dir"] = str(self.sacbot_dir.resolve())
        return data

    def bot_for(self, stages: int | None = None) -> BotSettings:
        """The training bot's settings after the first `stages` of the pretraining's stages (None: all of
        them, as the real-time chunks and the evals take them): `[bot]` with each stage's changes over it."""
        bot = self.bot
        for stage in [] if self.pretrain is None else self.pretrain.stages[:stages]:
            changes = stage.bot.model_dump(exclude_none=True)
            if changes:
                bot = BotSettings.model_validate({**bot.model_dump(exclude_none=True), **changes})
        return bot

    def out_dir(self, override: Path | None = None) -> Path:
        return override or self.out or Path("runs") / self.name


def _absolute(entry: str) -> str:
    """A pool entry that is a bot directory path, made absolute (a name stays a name)."""
    return str(Path(entry).resolve()) if "/" in entry else entry


def opponent_name(entry: str) -> str:
    """A pool entry is a bot name or a bot directory path; its name is the directory's last part."""
    return Path(entry).name if "/" in entry else entry


def _field_path(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def parse_campaign(data: dict[str, Any], source: str = "campaign") -> Campaign:
    try:
        campaign = Campaign.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        # A check across fields (a model validator at the top) names its field itself.
        where = f"{_field_path(err['loc'])}: " if err["loc"] else ""
        raise UserError(f"{source}: {where}{msg}", exit_code=2) from None
    stages = 0 if campaign.pretrain is None else len(campaign.pretrain.stages)
    if any(campaign.bot_for(n).kickstart for n in range(stages + 1)):
        from sacbot.engine import game_setup_for

        setup = game_setup_for(campaign.game.type, **campaign.game.setup)
        if (setup.arena_width, setup.arena_height) != TEACHER_ARENA:
            raise UserError(
                f"{source}: bot.kickstart: the teacher plays the {TEACHER_ARENA[0]}x{TEACHER_ARENA[1]} arena "
                f"(game type 1v1), not {setup.arena_width}x{setup.arena_height}",
                exit_code=2,
            )
    return campaign


def load_campaign(path: Path) -> Campaign:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read campaign file {path}: {exc.strerror or exc}", exit_code=2) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid TOML: {exc}", exit_code=2) from None
    return parse_campaign(data, str(path))
