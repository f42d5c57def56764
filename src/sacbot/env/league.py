"""The fast phase's league: opponents drawn per game (weights or PFSP), frozen snapshots of the learner too.

`sacbot train-fast --sampling weights|pfsp` gives every arena a new opponent at each new game (after
`rounds_per_game` rounds, or a truncated round), drawn from the pool by a generator seeded with (seed, the
run's starting env steps), so a run is reproducible and a resumed run does not replay the same draws:

- the classic opponents (or any `sacbot.opponents` name) with their `--opponents Name:weight` weights;
- frozen snapshots of the learner: every `snapshot_every` env steps the trainer's actor becomes `FastSnap<env
  steps>`, a `FrozenActorBot` (numpy inference, deterministic, the run's radar mode) that plays through the
  same features and action mapping as SacBot; the snapshots share `snapshot_weight` evenly, and beyond
  `snapshot_cap` the oldest leaves. Each is saved as an actor-only checkpoint `<out>/league/FastSnap<n>.zip`
  (atomic; read back without unpickling), so a resumed run plays against the same pool.

With "pfsp" each weight is multiplied by max(floor, (1 - win rate) ** power) (or, with `pfsp_curve =
"variance"`, by max(floor, (4 win rate (1 - win rate)) ** power)), the win rate over the last
`pfsp_window` finished rounds against that opponent (`sacbot.opponents.sampling`; refilled from `rounds.jsonl`
on resume); with `pfsp_revisit` N an entry with no round among the run's last N finished rounds draws at
factor 1. `<out>/league.jsonl` records each snapshot and, at every save, the pool with its probabilities,
win rates, the entries drawn as unmet (`stale`) and the games drawn since the last line.
"""

from __future__ import annotations

import random
import re
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sacbot.agent.features import RadarMode, RoundMemory, action_to_intent, stored_observation
from sacbot.errors import UserError
from sacbot.opponents import ClassicBot, make_opponent, opponent_class
from sacbot.opponents.sampling import LeagueConfig, RoundsSince, league_weights
from sacbot.protocol import BotIntent, GameStartedEventForBot, TickEventForBot
from sacbot.records import TRAIN_FAST, read_round_tail
from sacbot.rundir import WeightsPaths

FAST_SNAPSHOT_PREFIX = "FastSnap"  # the learner's in-process snapshots: FastSnap<env steps>
SAMPLINGS = ("spread", "weights", "pfsp")
_SNAPSHOT_FILE = re.compile(rf"^{FAST_SNAPSHOT_PREFIX}(\d+)\.zip$")
_TAIL_BYTES = 1 << 20  # enough of rounds.jsonl to refill the PFSP windows


def parse_weighted_opponents(spec: str | Sequence[str] | Mapping[str, float]) -> list[tuple[str, float]]:
    """`"SpinBot:2,Walls"` (or a list of such items, or a name -> weight mapping) -> [(name, weight)], names
    checked and spelled as `sacbot.opponents` does; duplicates are kept. A `UserError` (exit 2) otherwise."""
    items: list[tuple[str, Any]] = []
    if isinstance(spec, Mapping):
        items = [(str(k), v) for k, v in spec.items()]
    else:
        raw = spec.split(",") if isinstance(spec, str) else list(spec)
        for entry in (r.strip() for r in raw):
            if not entry:
                continue
            name, sep, text = entry.partition(":")
            try:
                value = float(text) if sep else 1.0
            except ValueError:
                raise UserError(f"--opponents: {entry!r}: the weight after ':' must be a number", 2) from None
            items.append((name.strip(), value))
    if not items:
        raise UserError("no opponent given; name at least one classic opponent", exit_code=2)
    out: list[tuple[str, float]] = []
    for name, weight in items:
        if not (isinstance(weight, int | float) and weight >= 0 and np.isfinite(weight)):
            raise UserError(f"--opponents: {name}: the weight must be a number >= 0, not {weight!r}", 2)
        out.append((opponent_class(name).name, float(weight)))
    if sum(w for _, w in out) <= 0:
        raise UserError("--opponents: at least one weight must be > 0", exit_code=2)
    return out


class FrozenActorBot(ClassicBot):
    """A frozen copy of the learner's actor as an in-process opponent (the `ClassicBot` per-tick contract).

    Each tick goes through `sacbot.agent.features` as in `sacbot play` (observation, then the deterministic
    action tanh(mu) of the numpy `FastActor`, then `action_to_intent` with the given radar mode); the GRU's
    hidden state and the features' memory start afresh every round. The actor may be shared by many bots
    (one thread): its steps return fresh arrays.
    """

    name: ClassVar[str] = "FrozenActor"

    def __init__(
        self, actor: Any, label: str, radar_mode: RadarMode = "lock", seed: int | None = None
    ) -> None:
        super().__init__(seed)
        self.actor = actor
        self.label = label
        self.radar_mode: RadarMode = radar_mode
        self.memory = RoundMemory.for_sizes(actor.sizes, self.arena_width, self.arena_height)
        self.hidden = actor.initial_hidden()
        self._round = 0

    def on_game_started(self, event: GameStartedEventForBot) -> None:
        super().on_game_started(event)
        setup = event.game_setup
        self.memory.start_game(float(setup.arena_width), float(setup.arena_height), event.my_id)
        self._round = 0

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        if tick.round_number != self._round:
            self._round = tick.round_number
            self.memory.new_round()
            self.hidden = self.actor.initial_hidden()
        # What the actor reads: the state, and the wave and threat inputs its networks were built with.
        sizes = self.actor.sizes
        obs = stored_observation(tick, self.memory, sizes.wave_inputs, sizes.threat_inputs, False)
        action, self.hidden = self.act(obs)
        return action_to_intent(action, self.radar_mode, self.memory)

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The action and new hidden state for this tick's observation: the deterministic tanh(mu)."""
        return self.actor.step(obs, self.hidden, deterministic=True)


def snapshot_label(env_steps: int) -> str:
    return f"{FAST_SNAPSHOT_PREFIX}{env_steps}"


class FastLeague:
    """The pool of one `train-fast` run and its per-game draws (see the module docstring)."""

    def __init__(
        self, opponents: Sequence[tuple[str, float]], config: LeagueConfig, out: Path, *, seed: int = 0
    ) -> None:
        self.config = config  # validated by its model: ranges, and a snapshot weight when snapshots are on
        self.base: dict[str, float] = {}
        for name, weight in opponents:
            self.base[name] = self.base.get(name, 0.0) + weight
        self.out = Path(out)
        self.folder = WeightsPaths(self.out).league
        self.seed = seed
        self.radar_mode: RadarMode = "lock"  # the run's, from `start`
        self.snapshots: dict[str, Any] = {}  # label -> FastActor, oldest first
        self.results: dict[str, deque[float]] = {}
        self.since = RoundsSince()  # the finished rounds since each opponent's last, for `pfsp_revisit`
        self.games: dict[str, int] = {}  # games drawn per opponent since the last pool line
        self.rng = random.Random(f"sacbot-fast-league:{seed}:0")
        self.next_snapshot = config.snapshot_every
        self._sizes: Any = None
        self._specs: Any = None

    # -- set-up -------------------------------------------------------------------------------------------

    def start(
        self, env_steps: int, actor_arrays: Mapping[str, np.ndarray], sizes: Any, radar_mode: RadarMode
    ) -> None:
        """Before the first draw: the snapshots and PFSP windows a previous run left, the draw generator, and
        the radar mode the snapshots play with (the run's: what the learner was trained with)."""
        from sacbot.checkpoint import specs_of

        self.radar_mode = radar_mode
        self._sizes, self._specs = sizes, specs_of(actor_arrays)
        self.rng = random.Random(f"sacbot-fast-league:{self.seed}:{env_steps}")
        if self.config.snapshot_every:
            self.next_snapshot = (env_steps // self.config.snapshot_every + 1) * self.config.snapshot_every
        found = sorted(
            (int(m.group(1)), path)
            for path in (self.folder.iterdir() if self.folder.is_dir() else [])
            if (m := _SNAPSHOT_FILE.match(path.name))
        )
        for _, path in found[: max(0, len(found) - self.config.snapshot_cap)]:
            path.unlink(missing_ok=True)  # beyond the cap: a kill came between a save and its cleanup
        for steps, path in found[-self.config.snapshot_cap :]:
            self.snapshots[snapshot_label(steps)] = self._load(path)
        self._refill(WeightsPaths(self.out).rounds)

    def _actor(self, arrays: Mapping[str, np.ndarray]) -> Any:
        from sacbot.agent.inference import FastActor

        return FastActor(arrays, self._sizes)

    def _load(self, path: Path) -> Any:
        from sacbot.checkpoint import load_checkpoint

        arrays, _ = load_checkpoint(path, self._specs)  # verified against this run's actor; never unpickles
        return self._actor(arrays)

    def _refill(self, rounds_log: Path) -> None:
        """PFSP windows from the tail of a previous run's rounds.jsonl (its train-fast rounds)."""
        for line in read_round_tail(rounds_log, _TAIL_BYTES):
            if line.written_by == TRAIN_FAST:
                self.record({"outcome": line.outcome, "opponent": line.opponent})

    # -- the pool -------------------------------------------------------------------------------------------

    def pool(self) -> dict[str, float]:
        """Base weights: the opponents', then the snapshots' (sharing `snapshot_weight` evenly)."""
        base = dict(self.base)
        for label in self.snapshots:
            base[label] = self.config.snapshot_weight / len(self.snapshots)
        return base

    def stale(self) -> list[str]:
        """The pool's entries unmet for `pfsp_revisit` finished rounds (drawn at factor 1)."""
        return self.since.stale(self.pool(), self.config.pfsp_revisit)

    def weights(self) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
        results = {name: (float(sum(w)), len(w)) for name, w in self.results.items()}
        return league_weights(
            self.pool(),
            results,
            self.config.sampling,
            self.config.pfsp_power,
            self.config.pfsp_floor,
            self.config.pfsp_curve,
            self.stale(),
        )

    def opponent_for(self, arena: int, game_seed: int) -> tuple[str, ClassicBot]:
        """A new game's opponent for `arena` (the environment's `opponent_source`)."""
        weights, _, _ = self.weights()
        name = self.rng.choices(list(weights), weights=list(weights.values()), k=1)[0]
        self.games[name] = self.games.get(name, 0) + 1
        actor = self.snapshots.get(name)
        if actor is not None:
            return name, FrozenActorBot(actor, name, self.radar_mode, seed=game_seed)
        return name, make_opponent(name, seed=game_seed)

    def record(self, result: Mapping[str, Any]) -> None:
        """One finished round (a `round_result`); truncated rounds have no winner and do not count."""
        outcome, opponent = result.get("outcome"), result.get("opponent")
        if outcome in ("won", "lost", "draw") and isinstance(opponent, str):
            window = self.results.setdefault(opponent, deque(maxlen=self.config.pfsp_window))
            window.append(1.0 if outcome == "won" else 0.0)
            self.since.add(opponent, 1)

    # -- snapshots ----------------------------------------------------------------------------------------

    def snapshot_due(self, env_steps: int) -> bool:
        return self.config.snapshot_every > 0 and env_steps >= self.next_snapshot

    def snapshot(self, env_steps: int, actor_arrays: Mapping[str, np.ndarray], meta: Any) -> str:
        """The trainer's actor becomes `FastSnap<env_steps>`: saved, logged, in the pool; the oldest beyond
        the cap leaves (its file too)."""
        import dataclasses

        from sacbot import jsonl
        from sacbot.checkpoint import save_checkpoint

        label = snapshot_label(env_steps)
        save_checkpoint(
            self.folder / f"{label}.zip", dict(actor_arrays), dataclasses.replace(meta, contents="actor")
        )
        self.snapshots.pop(label, None)
        self.snapshots[label] = self._actor(actor_arrays)
        removed = list(self.snapshots)[: max(0, len(self.snapshots) - self.config.snapshot_cap)]
        for old in removed:
            del self.snapshots[old]
        jsonl.append(
            WeightsPaths(self.out).league_log,
            {"event": "snapshot", "name": label, "env_steps": env_steps, "pool": list(self.snapshots),
             "removed": removed},
        )  # fmt: skip
        for old in removed:
            (self.folder / f"{old}.zip").unlink(missing_ok=True)
        self.next_snapshot = (env_steps // self.config.snapshot_every + 1) * self.config.snapshot_every
        return label

    def pool_line(self, env_steps: int) -> dict[str, Any]:
        """The `pool` line of league.jsonl (written at every save): probabilities, win rates, games drawn."""
        weights, rates, counts = self.weights()
        total = sum(weights.values())
        line = {
            "event": "pool",
            "env_steps": env_steps,
            "sampling": self.config.sampling,
            "pool": {n: round(w / total, 6) for n, w in weights.items()},
            "win_rates": {n: round(r, 4) for n, r in rates.items()},
            "rounds": counts,
            "stale": self.stale(),
            "games": dict(self.games),
            "snapshots": list(self.snapshots),
        }
        self.games = {}
        return line
