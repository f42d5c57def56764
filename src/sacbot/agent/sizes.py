"""Network sizes, a settings dataclass without torch (the numpy inference path imports it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import get_args

from sacbot.agent.options import WaveAim

# sin and cos of four angles (`sacbot.agent.features.angle_input_columns`).
ANGLE_INPUT_DIM = 8
# sin and cos of the enemy's energy as a phase (`sacbot.agent.features.energy_input_columns`).
ENERGY_INPUT_DIM = 2
# Where a linear aim points, from the state (`sacbot.agent.features.lead_input_columns`): its angle from the
# gun (sin, cos), its lead as a guess factor and the bullet's largest escape angle.
LEAD_INPUT_DIM = 4
# The critics' own inputs with `bullet_inputs`: six numbers for each of the three of our bullets in flight
# nearest the enemy (`sacbot.agent.features.bullet_inputs`).
BULLET_SLOTS = 3
BULLET_COLUMNS = 6
BULLET_INPUT_DIM = BULLET_SLOTS * BULLET_COLUMNS
# The wave inputs with `wave_inputs`: how the enemy answered our past shots this game, in guess factors
# (`sacbot.agent.features.wave_inputs`): a confidence, a histogram of WAVE_BINS bins, the enemy's sideways
# speed now and the histogram's peak turned to its current direction.
WAVE_BINS = 9
WAVE_INPUT_DIM = WAVE_BINS + 3
# How much each recorded wave weighs of the next in the wave inputs' histogram, unless the networks say
# otherwise (`NetworkSizes.wave_decay`); the threat inputs' hit histogram always decays by it.
WAVE_DECAY = 0.97
# The threat inputs with `threat_inputs`: the enemy's shots in flight, seen by its energy drops, and where
# its bullets hit us this game, in guess factors (`sacbot.agent.features.threat_inputs`): the waves in
# flight, the nearest one's time to reach us, our guess factor on it and its power, then a confidence and a
# histogram of WAVE_BINS bins of the hits, and the hits' share in the bin we are in.
THREAT_INPUT_DIM = WAVE_BINS + 6


@dataclass(frozen=True)
class NetworkSizes:
    """Network sizes (settings). `memoryless` makes every GRU a per-step layer (the no-memory control)."""

    state_dim: int = 17
    action_dim: int = 4
    embed: int = 128
    hidden: int = 128
    head: int = 64
    log_std_min: float = -20.0
    log_std_max: float = 2.0
    activation: str = "relu"
    memoryless: bool = False
    # Opt-in: the first layers also read sin/cos of four angles computed from the state
    # (`sacbot.agent.features.angle_input_columns`): no new information, a smooth form of it.
    angle_inputs: bool = False
    # Opt-in: they also read the enemy's energy as a phase (`sacbot.agent.features.energy_input_columns`),
    # where the drop of a shot stands out: no new information either.
    energy_inputs: bool = False
    # Opt-in: they also read where a linear aim points (`sacbot.agent.features.lead_input_columns`, the
    # teacher's gun): no new information either, but a fixed-point iteration a network learns only roughly.
    lead_inputs: bool = False
    # Opt-in: the critics (only) also read where our bullets in flight are against the enemy
    # (`sacbot.agent.features.bullet_inputs`), stored after each state in the replay; the actor never
    # reads them.
    bullet_inputs: bool = False
    # Opt-in: the actor and the critics also read where the enemy was, in guess factors, when the waves of
    # our past shots this game reached it (`sacbot.agent.features.wave_inputs`), stored after each state:
    # what tells a dodger from a regular mover, which the state of one turn does not.
    wave_inputs: bool = False
    # Opt-in: they also read the enemy's shots in flight (waves from its energy drops) and where its bullets
    # hit us this game, in guess factors (`sacbot.agent.features.threat_inputs`), stored after the wave
    # inputs: what a bot needs to dodge a gun that learns where it goes, which one turn's state does not say.
    threat_inputs: bool = False
    # Opt-in: the actor's gun entry is where the gun points, an offset from the enemy's bearing, rather than
    # how it turns (`sacbot.agent.features.GUN_OFFSET_RANGE`): what the action means, so it travels with the
    # networks. No input changes.
    gun_offset: bool = False
    # Opt-in: how much each recorded wave weighs of the next in the wave inputs' histogram (1: the game's
    # whole record alike): what the inputs mean, so it travels with the networks. A short memory (0.5)
    # follows a bot that moves away from where it was hit (a wave surfer); no shape changes.
    wave_decay: float = WAVE_DECAY
    # Opt-in: where the wave inputs' aim entry points. "peak": the histogram's most-weighted bin; "virtual":
    # that or a linear aim, whichever would have hit more of our past waves this game (Robocode's virtual
    # guns: a linear aim hits a regular mover, the peak a dodger). What the inputs mean, so it travels with
    # the networks; no shape changes.
    wave_aim: WaveAim = "peak"
    # Opt-in: the threat inputs' shares also read where we were as each enemy wave passed us unhit (a record
    # of visits beside the hits'), mixed in at this weight times the enemy's hit rate on us over 15% (at most
    # 1; `sacbot.agent.features.VISIT_RATE`). A gun that learns where we go (guess factors) aims by those
    # visits, not only by its hits; a surfer that avoids them flattens its movement. What the inputs mean,
    # so it travels with the networks; no shape changes.
    threat_visits: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 < self.wave_decay <= 1.0:
            raise ValueError(f"wave_decay must lie in (0, 1], not {self.wave_decay!r}")
        if self.wave_aim not in get_args(WaveAim):
            raise ValueError(f"wave_aim must be one of {', '.join(get_args(WaveAim))}, not {self.wave_aim!r}")
        if not 0.0 <= self.threat_visits <= 1.0:
            raise ValueError(f"threat_visits must lie in [0, 1], not {self.threat_visits!r}")

    @property
    def observed_dim(self) -> int:
        """Width of what is observed for the actor: the state, then the wave and the threat inputs that are
        on (the first entries of a stored observation)."""
        threats = THREAT_INPUT_DIM if self.threat_inputs else 0
        return self.state_dim + (WAVE_INPUT_DIM if self.wave_inputs else 0) + threats

    @property
    def threat_at(self) -> int:
        """Where the threat inputs start in an observation (after the state and the wave inputs)."""
        return self.state_dim + (WAVE_INPUT_DIM if self.wave_inputs else 0)

    @property
    def input_dim(self) -> int:
        """Width of the actor's input (and the critics', before their own inputs): the state, the wave and
        threat inputs (`observed_dim`), then the angle, energy and lead inputs that are on."""
        angles = ANGLE_INPUT_DIM if self.angle_inputs else 0
        leads = LEAD_INPUT_DIM if self.lead_inputs else 0
        return self.observed_dim + angles + (ENERGY_INPUT_DIM if self.energy_inputs else 0) + leads

    @property
    def critic_only_dim(self) -> int:
        """Width of the critics' own inputs (the bullet inputs when on), after `input_dim`."""
        return BULLET_INPUT_DIM if self.bullet_inputs else 0

    @property
    def stored_dim(self) -> int:
        """Width of a stored observation (the replay's, an environment's): the state, the wave and threat
        inputs (`observed_dim`), then the critics' own inputs."""
        return self.observed_dim + self.critic_only_dim

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
