"""Settings from the environment: Tank Royale's own variables plus `SACBOT_*`.

Tank Royale's booter passes SERVER_URL, SERVER_SECRET and BOT_* (see REFERENCE.md section 11); our own knobs
are SACBOT_* variables. A bad value raises `UserError` naming the variable, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from sacbot.agent.features import RadarMode
from sacbot.agent.inference import ActionMode
from sacbot.agent.options import HindsightDistance, HindsightTarget, TeacherGun, WaveAim
from sacbot.errors import UserError


def _split_list(value: object) -> object:
    # The booter joins lists with ", "; the official libraries split on \s*,\s*.
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class BotEnvironment(BaseSettings):
    """The variables any Tank Royale bot reads (official libraries' names, no prefix)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    server_url: str = "ws://localhost:7654"
    server_secret: str | None = None
    bot_booted: bool = False
    bot_name: str | None = None
    bot_version: str | None = None
    bot_authors: Annotated[list[str], NoDecode] = Field(default_factory=list)
    bot_description: str | None = None
    bot_homepage: str | None = None
    bot_country_codes: Annotated[list[str], NoDecode] = Field(default_factory=list)
    bot_game_types: Annotated[list[str], NoDecode] = Field(default_factory=list)
    bot_platform: str | None = None
    bot_prog_lang: str | None = None
    bot_initial_pos: str | None = None
    team_id: int | None = None
    team_name: str | None = None
    team_version: str | None = None

    _lists = field_validator("bot_authors", "bot_country_codes", "bot_game_types", mode="before")(_split_list)

    @field_validator("server_url")
    @classmethod
    def _ws_url(cls, value: str) -> str:
        if not value.startswith(("ws://", "wss://")):
            raise ValueError("must start with ws:// or wss://")
        return value


class SacbotSettings(BaseSettings):
    """sacbot's own knobs, each from a SACBOT_<NAME> variable."""

    model_config = SettingsConfigDict(env_prefix="SACBOT_", extra="ignore", case_sensitive=False)

    # Where weights, metrics and the round counter live; default: the bot directory's `weights/`.
    weights_dir: Path | None = None
    # An explicit checkpoint to start from (else: opponent best, global best, the shipped actor, fresh).
    checkpoint: Path | None = None
    # When the weights folder has no usable checkpoint: start from the shipped actor (else a fresh init).
    shipped: bool = True
    # The opponent key for the per-opponent best slot (a campaign passes it).
    opponent: str | None = None
    eval_mode: bool = False
    # How eval mode acts: the policy's mean, every action entry drawn (as training play does), or only the
    # target speed drawn (`sacbot.agent.inference.ActionMode`).
    eval_actions: ActionMode = "mean"
    # Another identity JSON, so one install can run under another name.
    bot_json: Path | None = None
    # None: `play` takes the mode its checkpoint was trained with (else spin); `train-fast` spins.
    radar_mode: RadarMode | None = None
    # Opt-in: potential-based aim shaping k (sacbot.agent.features), the teacher's weight (agent.teacher).
    aim_shaping: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    # Opt-in: potential-based closing-in shaping k (sacbot.agent.features): each step toward the enemy pays.
    close_shaping: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    # Opt-in: surf shaping k (sacbot.agent.features): each enemy wave that reaches us costs k times the share
    # of its hits in our guess-factor bin (needs the threat inputs).
    surf_shaping: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    kickstart: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    # The kickstart weight fades linearly to the floor at this many learner updates (in checkpoints), from
    # `kickstart_anneal_from` on; 0: constant.
    kickstart_anneal: int = Field(0, ge=0)
    kickstart_anneal_from: int = Field(0, ge=0)
    kickstart_floor: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    # Q-filtered kickstarting: the term counts only where the critics prefer the teacher's action.
    kickstart_filter: bool = False
    # The teacher's term on the movement entries (turn, speed) times this, against the gun's; 1: the same.
    kickstart_movement: float = Field(1.0, ge=0.0, allow_inf_nan=False)
    # ... from this learner update on (the full term on the movement before it); 0: from the start.
    kickstart_movement_from: int = Field(0, ge=0)
    # Opt-in surfing teacher: its speed by where the enemy's bullets have hit us, while a wave of its is in
    # flight (`TrainerConfig.teacher_surf`; needs the threat inputs).
    teacher_surf: bool = False
    # Opt-in: the teacher's gun aims at the wave inputs' most-weighted guess factor where their record is
    # confident, not by linear targeting (`TrainerConfig.teacher_gun`; needs the wave inputs).
    teacher_gun: TeacherGun = "linear"
    # Opt-in self-imitation: the weight of a term pulling the actor toward the replay's own actions where the
    # critics rate them above its mean action (`TrainerConfig.self_imitation`); 0 = off.
    self_imitation: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    # Opt-in hindsight aim: the weight of a term pulling the actor's gun turn, the step before each shot,
    # toward the turn that would have hit, found after the round (`TrainerConfig.hindsight_aim`); 0 = off.
    hindsight_aim: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    # ... on this many steps before each shot (1: the aiming step alone).
    hindsight_steps: int = Field(1, ge=1, le=16)
    # ... and its trigger label at this share of that weight (0: none; the teacher's fire entry fires
    # anywhere).
    hindsight_trigger: float = Field(1.0, ge=0.0, allow_inf_nan=False)
    # ... and its distance from the labels: squared (toward their mean), absolute (their median) or hit
    # (the gun toward their densest side, `sacbot.agent.hindsight.hit_distance`).
    hindsight_distance: HindsightDistance = "squared"
    # ... and where its labels before the aiming step point: the shot's direction, or the enemy's bearing
    # at each step plus the shot's offset from it (`sacbot.agent.hindsight`).
    hindsight_target: HindsightTarget = "direction"
    # n-step soft targets over the 16 trained steps of each window (1 = one-step SAC; R2D2 uses 5).
    n_step: int = Field(1, ge=1, le=16)
    # Opt-in: the networks also read sin/cos of four angles of the state (`NetworkSizes.angle_inputs`).
    # None: what the checkpoint was built with (off for a fresh start).
    angle_inputs: bool | None = None
    # Opt-in: they also read the enemy's energy as a phase (`NetworkSizes.energy_inputs`); None as above.
    energy_inputs: bool | None = None
    # Opt-in: they also read where a linear aim points (`NetworkSizes.lead_inputs`); None as above.
    lead_inputs: bool | None = None
    # Opt-in: they also read how the enemy answered our past shots this game (`NetworkSizes.wave_inputs`);
    # None as above.
    wave_inputs: bool | None = None
    # Opt-in: they also read the enemy's shots in flight and where its bullets hit us this game
    # (`NetworkSizes.threat_inputs`); None as above.
    threat_inputs: bool | None = None
    # Opt-in: the critics alone also read where our bullets in flight are (`NetworkSizes.bullet_inputs`);
    # None as above.
    bullet_inputs: bool | None = None
    # Opt-in: the actor's gun entry is where the gun points, an offset from the enemy's bearing, not a turn
    # (`NetworkSizes.gun_offset`); None: what the checkpoint was built with (off for a fresh start); set
    # against the checkpoint's, one error line (`sacbot.runtime.startup.gun_offset_for`).
    gun_offset: bool | None = None
    # Opt-in: the policy's bound on log std per action entry before tanh (`NetworkSizes.log_std_max`, 2.0 by
    # default); None: what the checkpoint was trained with. A lower bound keeps sampled play near the mean.
    log_std_max: float | None = Field(None, ge=-5.0, le=2.0, allow_inf_nan=False)
    # Opt-in: how much each recorded wave weighs of the next in the wave inputs' histogram
    # (`NetworkSizes.wave_decay`, 0.97 by default); None: what the checkpoint was built with. 0.5 follows a
    # wave surfer, which moves away from where it was hit.
    wave_decay: float | None = Field(None, gt=0.0, le=1.0, allow_inf_nan=False)
    # Opt-in: what the wave inputs' aim entry points at (`NetworkSizes.wave_aim`): "peak" (the default) or
    # "virtual" (the peak or a linear aim, whichever would have hit more of our past waves); None: what the
    # checkpoint was built with.
    wave_aim: WaveAim | None = None
    # Opt-in: the visits' weight in the threat inputs' shares, where we were as enemy waves passed us unhit
    # (`NetworkSizes.threat_visits`; 0 by default: hits only); None: what the checkpoint was built with.
    threat_visits: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    # Opt-in: the entropy the temperature is tuned toward (`TrainerConfig.target_entropy`); None: minus the
    # action's size (-4). A tighter log-std bound lowers the entropy the policy can reach at all.
    target_entropy: float | None = Field(None, ge=-40.0, le=10.0, allow_inf_nan=False)
    # Opt-in, `play` only: training play draws every action entry with log std at least this (above the
    # policy's bound: exactly this), so the critics see actions around the mean; None: the policy's spread.
    behaviour_log_std_min: float | None = Field(None, ge=-5.0, le=2.0, allow_inf_nan=False)
    # Opt-in: training play's exploration noise is coloured, power spectrum 1/f**beta along the turns
    # (`sacbot.agent.exploration`): 0 white (SAC's own draws), 1 pink, 2 red. Evals and the policy unchanged.
    noise_beta: float = Field(0.0, ge=0.0, le=3.0, allow_inf_nan=False)
    # Opt-in, train-fast and the Ray runners (not `play`): training play draws the gun turn with this many
    # times the policy's spread (`sacbot.agent.exploration.widen_gun`), so the critics see shots aimed off the
    # mean; 1: the policy's own.
    gun_spread: float = Field(1.0, ge=1.0, le=10.0, allow_inf_nan=False)
    device: Literal["auto", "cpu", "cuda"] = "auto"
    seed: int | None = None
    # `sacbot play` (runtime): the channel between the realtime and trainer threads, and the trainer's pace.
    channel_capacity: int = Field(4096, ge=1)  # transitions; when full the oldest is dropped and counted
    warmup_rounds: int = Field(2, ge=0)  # rounds stored in the replay before the first update
    utd_ratio: float = 0.5  # updates per stored transition; <= 0 trains flat out
    # Opt-in, `play` only: the share of each batch drawn from this run's own rounds, not the kept replay
    # it started with (`TrainerConfig.fresh_fraction`); 0: uniform over the whole replay.
    fresh_fraction: float = Field(0.0, ge=0.0, le=1.0, allow_inf_nan=False)
    # The trainer's first updates step the critics alone (`TrainerConfig.critic_warmup`); None: in `play`
    # `CRITIC_WARMUP` updates where an actor archive's actor trains on with fresh critics, else 0; in
    # `train-fast` 0.
    critic_warmup: int | None = Field(None, ge=0)
    # The anchor term's weight, toward the actor the game (train-fast: the run) started from
    # (`TrainerConfig.anchor`); None: in `play` `ANCHOR` where an actor archive's actor trains on with fresh
    # critics, else 0; in `train-fast` 0.
    anchor: float | None = Field(None, ge=0.0, allow_inf_nan=False)
    # The anchor term on the movement entries times this (`TrainerConfig.anchor_movement`; 0: the gun held,
    # the movement free)
    anchor_movement: float = Field(1.0, ge=0.0, allow_inf_nan=False)
    publish_every: int = Field(10, ge=1)  # publish new actor weights every N updates
    best_window: int = Field(10, ge=1)  # rounds in the per-opponent score-share window
    torch_threads: int = Field(1, ge=1)  # torch intra-op threads of the trainer thread
    switch_interval_ms: float = Field(0.5, gt=0)  # sys.setswitchinterval, so the realtime thread waits less
    stats_file: Path | None = None  # bench only: per-tick latencies and update rate as JSON at exit
    batch_size: int = Field(64, ge=1)  # windows per SAC update in `sacbot play`'s trainer
    trainer_nice: int = Field(0, ge=0, le=19)  # niceness added to the trainer thread (Linux)
    trainer_duty: float = Field(1.0, gt=0, le=1)  # share of wall time the trainer updates; it sleeps the rest
    # Steps of whole rounds of replay `play` keeps in the weights folder (`replay.npz`) at game end and loads
    # at start, so a restarted bot does not fit its first fresh rounds; 0 = none (each game starts empty).
    replay_keep: int = Field(50_000, ge=0)
    # TensorBoard event files (the `tensorboard` extra): play's round and train-pass metrics as scalars.
    tensorboard: Path | None = None


_S = TypeVar("_S", bound=BaseSettings)


def _load(cls: type[_S]) -> _S:
    try:
        return cls()
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "?"
        prefix = cls.model_config.get("env_prefix", "") or ""
        raise UserError(f"bad setting {(prefix + field).upper()}: {err['msg']}", exit_code=2) from None


def load_bot_environment() -> BotEnvironment:
    return _load(BotEnvironment)


def load_sacbot_settings() -> SacbotSettings:
    return _load(SacbotSettings)
