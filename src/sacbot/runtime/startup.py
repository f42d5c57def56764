"""Which weights `sacbot play` starts from: SACBOT_CHECKPOINT, else the slot order, else the shipped actor,
else a fresh init.

The slot order is the checkpoint package's (`load_order`: the opponent's best, then the global best); a slot
that exists but cannot be used is skipped with a warning. An explicit checkpoint that cannot be used is an
error. Eval mode needs only the actor, so an actor-only export works there too.

The shipped actor (`SHIPPED_ACTOR`, an actor-only export inside the package, its provenance in
`extra.provenance`) is the start when the weights folder has no usable checkpoint, unless SACBOT_SHIPPED=0
(campaigns and benchmarks set it: training from scratch stays from scratch). It holds only the actor: a
training start gets its actor weights (and its temperature where the archive holds one) with fresh critics,
optimisers and counters (`full_start_arrays`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import numpy as np

from sacbot.agent.features import RadarMode
from sacbot.agent.options import WaveAim
from sacbot.agent.sizes import NetworkSizes
from sacbot.checkpoint import (
    ACTOR_PREFIX,
    CheckpointError,
    CheckpointMeta,
    actor_archive_specs,
    check_specs,
    load_checkpoint,
    load_for_game,
    load_order,
    read_meta,
)
from sacbot.errors import UserError

if TYPE_CHECKING:
    from sacbot.agent.trainer_config import TrainerConfig
    from sacbot.settings import SacbotSettings

ArraySpecs = dict[str, tuple[tuple[int, ...], str]]

# The past-teacher campaign's best checkpoint, actor-only, with its provenance (campaign, commit, evals).
SHIPPED_ACTOR = Path(__file__).resolve().parent.parent / "data" / "sacbot-actor.zip"


@dataclass(frozen=True)
class StartWeights:
    arrays: dict[str, np.ndarray] | None  # None: a fresh init
    source: str  # the one line saying where they came from
    meta: CheckpointMeta | None = None
    shipped: bool = False  # the shipped actor (no checkpoint of the weights folder's own)


def _stderr(line: str) -> None:
    print(f"sacbot: {line}", file=sys.stderr, flush=True)


def radar_mode_for(setting: str | None, meta: CheckpointMeta | None) -> tuple[RadarMode, str]:
    """The radar mode to play with, and why: SACBOT_RADAR_MODE when set, else the one the checkpoint was
    trained with (a policy trained with a locked radar sees stale enemies under a spinning one), else spin."""
    if setting in ("spin", "lock"):
        return ("lock" if setting == "lock" else "spin"), "SACBOT_RADAR_MODE"
    trained = meta.extra.get("radar_mode") if meta is not None else None
    if trained in ("spin", "lock"):
        return ("lock" if trained == "lock" else "spin"), "the checkpoint's"
    return "spin", "the default"


def input_flag_for(name: str, setting: bool | None, meta: CheckpointMeta | None) -> bool:
    """Whether the networks read one kind of extra inputs (`NetworkSizes.angle_inputs`, `.wave_inputs`,
    ...): its SACBOT_* setting when set, else what the checkpoint's networks were built with (their first
    layers' width depends on it), else off."""
    if setting is not None:
        return setting
    return meta is not None and meta.network_sizes.get(name) is True


def gun_offset_for(setting: bool | None, meta: CheckpointMeta | None) -> bool:
    """Whether the actor's gun entry is an offset from the enemy's bearing (`NetworkSizes.gun_offset`): the
    checkpoint's, which SACBOT_GUN_OFFSET may only repeat (the entry's meaning is in the weights: read the
    other way they aim elsewhere, with no shape to say so), else the setting, else off. `UserError` (exit 2)
    where the setting contradicts the checkpoint."""
    if meta is None:
        return bool(setting)
    trained = meta.network_sizes.get("gun_offset") is True
    if setting is not None and setting != trained:
        how = "with" if trained else "without"
        raise UserError(
            f"SACBOT_GUN_OFFSET={int(setting)}, but the checkpoint to start from was trained {how} the gun"
            " offset; unset it to play the checkpoint as trained, or start from other weights"
            " (SACBOT_SHIPPED=0: fresh ones where the weights folder has none)",
            exit_code=2,
        )
    return trained


def _finite_number(value: object) -> float | None:
    """A number a checkpoint's metadata recorded, as a float; None for anything else (missing, bool, NaN)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _trained_size(meta: CheckpointMeta | None, key: str, valid: Callable[[float], bool]) -> float:
    """The number the checkpoint's `network_sizes` recorded under `key` where `valid`, else the default's (a
    checkpoint from before the setting recorded none: its networks read the default's meaning)."""
    trained = _finite_number(meta.network_sizes.get(key)) if meta is not None else None
    if trained is not None and valid(trained):
        return trained
    value: float = getattr(NetworkSizes(), key)
    return value


def log_std_max_for(setting: float | None, meta: CheckpointMeta | None) -> float:
    """The policy's bound on log std (`NetworkSizes.log_std_max`): SACBOT_LOG_STD_MAX when set, else the one
    the checkpoint was trained with, else the default."""
    return setting if setting is not None else _trained_size(meta, "log_std_max", lambda _: True)


def wave_decay_for(setting: float | None, meta: CheckpointMeta | None) -> float:
    """How the wave inputs' histogram forgets (`NetworkSizes.wave_decay`): SACBOT_WAVE_DECAY when set, else
    the one the checkpoint's networks were built with, else the default (a checkpoint from before the
    setting recorded none: its networks read the default's record)."""
    return setting if setting is not None else _trained_size(meta, "wave_decay", lambda v: 0.0 < v <= 1.0)


def wave_aim_for(setting: WaveAim | None, meta: CheckpointMeta | None) -> WaveAim:
    """What the wave inputs' aim entry points at (`NetworkSizes.wave_aim`): SACBOT_WAVE_AIM when set, else
    what the checkpoint's networks were built with, else the default (the histogram's peak)."""
    if setting is not None:
        return setting
    trained = meta.network_sizes.get("wave_aim") if meta is not None else None
    for aim in get_args(WaveAim):
        if trained == aim:
            return aim
    return NetworkSizes().wave_aim


def threat_visits_for(setting: float | None, meta: CheckpointMeta | None) -> float:
    """The visits' weight in the threat inputs' shares (`NetworkSizes.threat_visits`): SACBOT_THREAT_VISITS
    when set, else what the checkpoint's networks were built with, else the default (hits only)."""
    return setting if setting is not None else _trained_size(meta, "threat_visits", lambda v: 0.0 <= v <= 1.0)


def target_entropy_for(setting: float | None, meta: CheckpointMeta | None) -> float | None:
    """The entropy the temperature is tuned toward (`TrainerConfig.target_entropy`): SACBOT_TARGET_ENTROPY
    when set, else the one the checkpoint was trained with (its `extra`), else None: the trainer's default."""
    if setting is not None:
        return setting
    return _finite_number(meta.extra.get("target_entropy")) if meta is not None else None


def sizes_said(sizes: NetworkSizes, training: bool) -> list[str]:
    """The start-up lines of a run whose networks differ from the default shapes: the extra inputs they read
    and, when it trains, the critics' bullet inputs and a log-std bound other than the default's."""
    lines = []
    if sizes.angle_inputs:
        lines.append("angle inputs on: the networks also read sin/cos of four angles of the state")
    if sizes.energy_inputs:
        lines.append("energy inputs on: the networks also read the enemy's energy as a phase")
    if sizes.lead_inputs:
        lines.append("lead inputs on: the networks also read where a linear aim points")
    if sizes.wave_inputs:
        where = "where the enemy was when our past shots reached it"
        lines.append(f"wave inputs on: the networks also read {where}")
    if sizes.threat_inputs:
        where = "the enemy's shots in flight and where its bullets hit us"
        lines.append(f"threat inputs on: the networks also read {where}")
    if sizes.gun_offset:
        lines.append("gun offset on: the actor's gun entry is where the gun points from the enemy's bearing")
    if sizes.bullet_inputs and training:
        lines.append("bullet inputs on: the critics also read where our bullets in flight are")
    if sizes.wave_inputs and sizes.wave_decay != NetworkSizes().wave_decay:
        lines.append(f"wave inputs' decay {sizes.wave_decay:g}: their record follows the enemy's last waves")
    if sizes.wave_inputs and sizes.wave_aim == "virtual":
        lines.append("wave inputs' aim virtual: the peak or a linear aim, whichever hit more of our waves")
    if sizes.threat_inputs and sizes.threat_visits > 0.0:
        lines.append(
            f"threat inputs' visits {sizes.threat_visits:g}: they also read where we were as the enemy's"
            " waves passed us, as far as its bullets hit us"
        )
    if sizes.log_std_max != NetworkSizes().log_std_max and training:
        lines.append(f"log std bound {sizes.log_std_max:g}: sampled actions stay nearer the mean")
    return lines


def warmup_said(threshold: int, updates: int) -> str | None:
    """The start-up line of the critics' warm-up (`TrainerConfig.critic_warmup`: the learner's updates below
    `threshold` step the critics alone) for a learner at `updates`; None when it is over or off."""
    if threshold <= updates:
        return None
    if updates == 0:
        return f"critics warm up: the first {threshold} updates step the critics alone"
    left = threshold - updates
    return f"critics warm up: the updates before update {threshold} (the next {left}) step the critics alone"


def trainer_said(config: TrainerConfig, updates: int, started: str) -> list[str]:
    """The start-up lines of a trainer at `updates` whose loss has terms beyond plain SAC: the critics'
    warm-up (`warmup_said`), the anchor toward the actor the `started` ("game", "run") began with,
    self-imitation, hindsight aim and the kickstart term with the teacher's opt-in movement and gun.
    `sacbot play` and `sacbot train-fast` both say them."""
    warming = warmup_said(config.critic_warmup, updates)
    lines = [] if warming is None else [warming]
    if config.anchor > 0.0:
        moving = config.anchor_movement
        held = "" if moving == 1.0 else f" (its movement entries at {moving:g} of the gun's)"
        lines.append(
            f"anchor {config.anchor:g}: the actor is held near the one this {started} started from{held}"
        )
    if config.self_imitation > 0.0:
        lines.append(
            f"self-imitation {config.self_imitation:g}: toward replay actions the critics rate higher"
        )
    if config.hindsight_aim > 0.0:
        lines.append(f"hindsight aim {config.hindsight_aim:g}: the gun learns where each shot would have hit")
    if config.kickstart > 0.0:
        how = ""
        if config.kickstart_anneal > 0:
            how = (
                f", fading to {config.kickstart_floor:g} between updates {config.kickstart_anneal_from}"
                f" and {config.kickstart_anneal}"
            )
        if config.kickstart_movement != 1.0:
            since = config.kickstart_movement_from
            how += f", its movement entries at {config.kickstart_movement:g} of the gun's" + (
                f" from update {since}" if since > 0 else ""
            )
        if config.kickstart_filter:
            how += ", only where the critics rate the teacher's action higher"
        lines.append(f"kickstart {config.kickstart:g}: the actor's loss also pulls toward the teacher{how}")
        if config.teacher_surf:
            least = "where the enemy's bullets have hit us least"
            if config.sizes.threat_inputs and config.sizes.threat_visits > 0.0:
                least += ", and we have been least as its waves passed"
            lines.append(f"surfing teacher: its speed goes {least}")
        if config.teacher_gun == "wave":
            aim = "likeliest guess factor"
            if config.sizes.wave_aim == "virtual":
                aim += ", or a linear aim where that has hit more"
            lines.append(f"wave gun teacher: it aims at the wave record's {aim}")
    return lines


def network_sizes_for(settings: SacbotSettings, meta: CheckpointMeta | None) -> NetworkSizes:
    """The networks' sizes for a start from `meta` (or a fresh one): the default shapes, with the extra
    inputs SACBOT_ANGLE_INPUTS, SACBOT_ENERGY_INPUTS, SACBOT_LEAD_INPUTS, SACBOT_WAVE_INPUTS,
    SACBOT_THREAT_INPUTS and SACBOT_BULLET_INPUTS ask for, else those the checkpoint was built with; the
    gun entry's meaning (`gun_offset_for`); the log-std bound of SACBOT_LOG_STD_MAX, the wave inputs' decay
    of SACBOT_WAVE_DECAY and their aim of SACBOT_WAVE_AIM, the threat inputs' visits of SACBOT_THREAT_VISITS,
    each else the checkpoint's."""
    return NetworkSizes(
        angle_inputs=input_flag_for("angle_inputs", settings.angle_inputs, meta),
        energy_inputs=input_flag_for("energy_inputs", settings.energy_inputs, meta),
        lead_inputs=input_flag_for("lead_inputs", settings.lead_inputs, meta),
        wave_inputs=input_flag_for("wave_inputs", settings.wave_inputs, meta),
        threat_inputs=input_flag_for("threat_inputs", settings.threat_inputs, meta),
        bullet_inputs=input_flag_for("bullet_inputs", settings.bullet_inputs, meta),
        gun_offset=gun_offset_for(settings.gun_offset, meta),
        log_std_max=log_std_max_for(settings.log_std_max, meta),
        wave_decay=wave_decay_for(settings.wave_decay, meta),
        wave_aim=wave_aim_for(settings.wave_aim, meta),
        threat_visits=threat_visits_for(settings.threat_visits, meta),
    )


# The settings every learner shell (`sacbot play`'s trainer, train-fast, the Ray learner) hands its trainer as
# they are: the training recipe. Each shell chooses the rest (`trainer_config_for`).
RECIPE_SETTINGS = (
    "kickstart",
    "kickstart_anneal",
    "kickstart_anneal_from",
    "kickstart_floor",
    "kickstart_movement",
    "kickstart_movement_from",
    "kickstart_filter",
    "teacher_surf",
    "teacher_gun",
    "self_imitation",
    "hindsight_aim",
    "hindsight_steps",
    "hindsight_trigger",
    "hindsight_distance",
    "hindsight_target",
    "n_step",
    "anchor_movement",
)


def trainer_config_for(settings: SacbotSettings, sizes: NetworkSizes, **chosen: Any) -> TrainerConfig:
    """The trainer's configuration for networks of `sizes`: the recipe's settings (`RECIPE_SETTINGS`) as
    they are, then what the shell chose (`chosen`, TrainerConfig's fields: its device, seed, entropy target
    and critics' warm-up, or a recipe setting it overrides, as play does for the shipped actor's teacher)."""
    from sacbot.agent.trainer_config import TrainerConfig

    values: dict[str, Any] = {name: getattr(settings, name) for name in RECIPE_SETTINGS}
    values.update(chosen)
    return TrainerConfig(sizes=sizes, **values)


def start_meta(
    explicit: Path | None, weights_dir: Path, opponent: str | None, shipped: Path | None = SHIPPED_ACTOR
) -> CheckpointMeta | None:
    """The metadata of the archive `choose_start` will try first, read before torch loads and the networks
    are built (their input width comes from it). SACBOT_CHECKPOINT: its meta, and a missing or broken file is
    its CheckpointError now; else the first slot that exists, else the shipped actor (`shipped`; None: left
    out); None when there is none or it cannot be read (choose_start then skips it)."""
    if explicit is not None:
        return read_meta(explicit.expanduser())
    path = next((p for p in load_order(weights_dir, opponent) if p.is_file()), None)
    if path is None and shipped is not None and shipped.is_file():
        path = shipped
    if path is None:
        return None
    try:
        return read_meta(path)
    except CheckpointError:
        return None  # choose_start says why, with its own line


def _shipped_trained(start: StartWeights, key: str) -> object:
    """What the shipped actor's meta says it was trained with (`extra[key]`); None for any other start."""
    return start.meta.extra.get(key) if start.shipped and start.meta is not None else None


# A training start with fresh critics under a trained actor (an actor archive, the shipped actor's
# included): so many updates step the critics alone before the actor moves (`TrainerConfig.critic_warmup`),
# and then the anchor term at this weight holds the actor near the one it started from
# (`TrainerConfig.anchor`). Without them, training play from the shipped actor won 1 of 100 rounds against
# Surfer, 2 of 60 against Gunner and 1 of 60 against Orbiter (its frozen mean: 39, 70 and 67 of 100).
CRITIC_WARMUP = 2000
ANCHOR = 50.0


def _fresh_critics(start: StartWeights) -> bool:
    """Whether a training start takes a trained actor with fresh critics (the shipped actor, or an actor
    archive named by SACBOT_CHECKPOINT)."""
    actor_archive = start.meta is not None and start.meta.contents == "actor"
    return start.arrays is not None and (start.shipped or actor_archive)


def critic_warmup_for(setting: int | None, start: StartWeights) -> int:
    """The critics' warm-up of a training start: SACBOT_CRITIC_WARMUP when set, else `CRITIC_WARMUP` where
    an actor trains on with fresh critics, else 0."""
    if setting is not None:
        return setting
    return CRITIC_WARMUP if _fresh_critics(start) else 0


def anchor_for(setting: float | None, start: StartWeights) -> float:
    """The anchor term's weight of a training start: SACBOT_ANCHOR when set, else `ANCHOR` where an actor
    trains on with fresh critics, else 0."""
    if setting is not None:
        return setting
    return ANCHOR if _fresh_critics(start) else 0.0


# The recipe settings a training start from the shipped actor takes from its meta (`extra`, as it last learnt
# them) where the settings leave them unset: the teacher's term (its weight, Q-filter and movement share) and
# the teacher's movement and gun. With fresh critics and no teacher's term the shipped actor collapsed within
# ten rounds; a teacher other than the one it learnt from pulls it off its play.
SHIPPED_RECIPE = ("kickstart", "kickstart_filter", "kickstart_movement", "teacher_surf", "teacher_gun")


def shipped_recipe(start: StartWeights, settings: SacbotSettings) -> dict[str, Any]:
    """The shipped actor's values of `SHIPPED_RECIPE` that differ from the settings', for those the settings
    leave unset, each validated as its setting is (an archive from before a setting, or a value that does not
    validate, keeps the setting's); empty for any other start."""
    from pydantic import ValidationError

    taken: dict[str, Any] = {}
    for name in SHIPPED_RECIPE:
        trained = _shipped_trained(start, name)
        if trained is None or name in settings.model_fields_set:
            continue
        try:
            value = getattr(type(settings).model_validate({**settings.model_dump(), name: trained}), name)
        except ValidationError:
            continue
        if value != getattr(settings, name):
            taken[name] = value
    return taken


def recipe_of(config: TrainerConfig) -> dict[str, Any]:
    """The training recipe as a trainer runs it (`RECIPE_SETTINGS`), as checkpoints record it in `extra`."""
    return {name: getattr(config, name) for name in RECIPE_SETTINGS}


def actor_specs(specs: ArraySpecs) -> ArraySpecs:
    return {name: spec for name, spec in specs.items() if name.startswith(ACTOR_PREFIX)}


def shipped_label(path: Path, meta: CheckpointMeta | None) -> str:
    """`shipped actor NAME (campaign C, commit abc1234)`, from the archive's extra.provenance."""
    provenance = meta.extra.get("provenance") if meta is not None else None
    details: list[str] = []
    if isinstance(provenance, dict):
        if provenance.get("campaign"):
            details.append(f"campaign {provenance['campaign']}")
        if provenance.get("commit"):
            details.append(f"commit {str(provenance['commit'])[:7]}")
    return f"shipped actor {path.name}" + (f" ({', '.join(details)})" if details else "")


def load_actor_archive(path: Path, specs: ArraySpecs) -> tuple[dict[str, np.ndarray], CheckpointMeta | None]:
    """An actor archive's arrays checked against a trainer's `specs`: the actor's, and its temperature where
    the archive holds one, so a training start keeps the entropy weight the actor learnt with (at the
    trainer's initial 0.2 in place of the shipped actor's ~8e-5 the entropy term pulls its saturated entries,
    full speed and full power, inward). CheckpointError when unusable."""
    arrays, meta = load_checkpoint(path)
    wanted = actor_archive_specs(specs, arrays)
    check_specs(arrays, wanted, str(path), subset=True)
    return {name: arrays[name] for name in wanted}, meta


def full_start_arrays(
    start: Mapping[str, np.ndarray], fresh: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """A training start from `start` (full, or actor-only): its arrays over a fresh trainer's `state_arrays`,
    so an actor-only archive trains on with fresh critics, optimisers and counters."""
    return {**fresh, **start}


def choose_start(
    explicit: Path | None,
    weights_dir: Path,
    opponent: str | None,
    specs: ArraySpecs,
    actor_only: bool,
    shipped: Path | None = SHIPPED_ACTOR,
    warn: Callable[[str], None] = _stderr,
) -> StartWeights:
    """`shipped=None` (SACBOT_SHIPPED=0) leaves the shipped actor out: a fresh init follows the slots."""
    wanted = actor_specs(specs) if actor_only else specs
    if explicit is not None:
        path = explicit.expanduser().resolve()
        exported = read_meta(path)
        if exported is not None and exported.contents == "actor":  # trains on with fresh critics
            arrays, meta = load_actor_archive(path, specs)
        else:
            arrays, meta = load_checkpoint(path, wanted, subset=actor_only)
        updates = meta.updates if meta is not None else "?"
        return StartWeights(arrays, f"loaded {path} (SACBOT_CHECKPOINT; updates {updates})", meta)
    loaded = load_for_game(weights_dir, opponent, wanted, subset=actor_only)
    if loaded is not None:
        updates = loaded.meta.updates if loaded.meta is not None else "?"
        source = f"loaded slot {loaded.slot} from {loaded.path} (updates {updates})"
        return StartWeights(loaded.arrays, source, loaded.meta)
    where = f"for opponent {opponent} " if opponent else ""
    if shipped is not None and shipped.is_file():
        try:
            arrays, meta = load_actor_archive(shipped, specs)
        except CheckpointError as exc:
            warn(f"warning: skipping the shipped actor: {exc}")
        else:
            trains = "" if actor_only else "; fresh critics"
            why = f"no usable checkpoint {where}in {weights_dir}{trains}"
            return StartWeights(arrays, f"start: {shipped_label(shipped, meta)}; {why}", meta, shipped=True)
        return StartWeights(None, f"fresh init (no usable checkpoint {where}in {weights_dir})")
    opted_out = "; SACBOT_SHIPPED=0" if shipped is None else ""
    return StartWeights(None, f"fresh init (no usable checkpoint {where}in {weights_dir}{opted_out})")
