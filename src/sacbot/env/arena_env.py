"""`TankRoyaleEnv`: one Gymnasium environment = one in-process arena (the engine) against a classic opponent.

An episode is a round. The agent's observation, reward and action mapping are `sacbot.agent.features` (the
same calls `sacbot play` makes on the same protocol objects), so what a policy learns here is what it sees
over WebSocket. The opponent is a `sacbot.opponents` policy fed the same tick, as the arena would feed it.
Both read `sacbot.env.ticks.tick_view`s: TickEventForBot's attribute names and values, without the cost of
building the full protocol object each turn.

Round flow (as on the arena): `reset()` starts a round and plays turn 1 (nobody acts in turn 1), then returns
the observation of the agent's turn-1 tick. `step(action)` sends the agent's intent and the opponent's answer
to that tick, plays one turn and returns the next tick's observation and reward. `terminated` is the round's
end; `truncated` comes only from `max_turns`. Consecutive resets play the rounds of one game (so opponents
that learn between rounds, like Corners, do); `reset(seed=s)` starts a new game whose engine seed is s (the
game an arena started with `seed=s` plays, given the same bot ids) and whose opponent is seeded with s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from sacbot.agent.features import (
    ACTION_DIM,
    RadarMode,
    RoundMemory,
    round_end_reward,
    shaping_problem,
    stored_observation,
)
from sacbot.agent.sizes import NetworkSizes
from sacbot.engine import Game, Participant, game_setup_for
from sacbot.env.stepping import advance
from sacbot.env.ticks import tick_view
from sacbot.errors import UserError
from sacbot.opponents import ClassicBot, make_opponent, opponent_class
from sacbot.protocol import GameSetup, RoundStartedEvent

AGENT_NAME = "SacBot"


def parse_opponents(opponents: str | Sequence[str]) -> tuple[str, ...]:
    """Opponent names from "SpinBot,Walls" or a sequence; each checked (UserError, exit 2, when unknown)."""
    names = [n.strip() for n in opponents.split(",")] if isinstance(opponents, str) else list(opponents)
    names = [n for n in names if n]
    if not names:
        raise UserError("no opponent given; name at least one classic opponent", exit_code=2)
    return tuple(opponent_class(n).name for n in names)


class TankRoyaleEnv(gym.Env[np.ndarray, np.ndarray]):
    """SacBot against one classic opponent in the engine, one round per episode.

    Args:
        opponent: a classic opponent name, or several ("SpinBot,Walls" or a list): each game draws one.
        game_type: the engine preset ("1v1", "classic", ...); `arena_width` / `arena_height` override it.
        rounds_per_game: rounds played before a new game (new placement seed, new opponent draw).
        radar_mode: the features' radar behaviour ("spin" or "lock"), as `sacbot play`'s SACBOT_RADAR_MODE.
        max_turns: truncate a round after this many turns (None: play it out; inactivity ends every round).
        aim_shaping: k of the opt-in aim shaping (`sacbot.agent.features`), as SACBOT_AIM_SHAPING; 0 = off.
        close_shaping: k of the opt-in closing-in shaping (the same module), as SACBOT_CLOSE_SHAPING; 0 = off.
        surf_shaping: k of the opt-in surf shaping (the same module), as SACBOT_SURF_SHAPING; 0 = off. It
            reads the threat inputs' record, so it needs `threat_inputs`.
        sizes: what the networks read (`NetworkSizes`; default: the 17 state entries): observations carry
            the wave inputs after the state with `wave_inputs` (12 more entries,
            `sacbot.agent.features.wave_inputs`), then the threat inputs with `threat_inputs` (15 more,
            `sacbot.agent.features.threat_inputs`), then the critics' own inputs with `bullet_inputs` (18
            more, `sacbot.agent.features.bullet_inputs`; the width is `NetworkSizes.stored_dim`); the memory
            keeps its records with the meanings the networks read them by (`RoundMemory.for_sizes`: the gun
            entry read as an offset with `gun_offset`, `wave_decay`, `wave_aim`, `threat_visits`), as
            `sacbot play` does with the same sizes.
        agent_id / opponent_id: the bot ids (an arena numbers bots by session id; a fidelity test matches it).
        opponent_source: called with the game's seed at every new game, returns (name, policy): the opponent
            then comes from it instead of a draw among `opponent` (`sacbot.env.league`, train-fast's league).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        opponent: str | Sequence[str] = "SpinBot",
        *,
        game_type: str = "1v1",
        arena_width: int | None = None,
        arena_height: int | None = None,
        rounds_per_game: int = 10,
        radar_mode: RadarMode = "spin",
        max_turns: int | None = None,
        aim_shaping: float = 0.0,
        close_shaping: float = 0.0,
        surf_shaping: float = 0.0,
        sizes: NetworkSizes | None = None,
        agent_id: int = 1,
        opponent_id: int = 2,
        render_mode: str | None = None,
        opponent_source: Callable[[int], tuple[str, ClassicBot]] | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None:
            raise UserError(f"render_mode {render_mode!r} is not supported (use `sacbot arena` to watch)", 2)
        self.opponents = parse_opponents(opponent)
        overrides: dict[str, Any] = {"number_of_rounds": rounds_per_game}
        if arena_width is not None:
            overrides["arena_width"] = arena_width
        if arena_height is not None:
            overrides["arena_height"] = arena_height
        self.setup: GameSetup = game_setup_for(game_type, **overrides)
        if radar_mode not in ("spin", "lock"):
            raise UserError(f"radar_mode must be 'spin' or 'lock', not {radar_mode!r}", exit_code=2)
        self.radar_mode: RadarMode = radar_mode
        self.max_turns = max_turns
        self.agent_id, self.opponent_id = agent_id, opponent_id
        sizes = NetworkSizes() if sizes is None else sizes
        self.wave_inputs, self.threat_inputs = sizes.wave_inputs, sizes.threat_inputs
        self.bullet_inputs = sizes.bullet_inputs
        self.obs_dim = sizes.stored_dim
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (self.obs_dim,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)
        self.game: Game | None = None
        self.opponent: ClassicBot | None = None
        self.opponent_name = self.opponents[0]
        self.opponent_source = opponent_source
        problem = shaping_problem(aim_shaping, close_shaping, surf_shaping, sizes.threat_inputs)
        if problem is not None:
            raise UserError(problem, exit_code=2)
        self.memory = RoundMemory.for_sizes(
            sizes,
            float(self.setup.arena_width),
            float(self.setup.arena_height),
            agent_id,
            aim_shaping=aim_shaping,
            close_shaping=close_shaping,
            surf_shaping=surf_shaping,
        )
        self._round_open = False
        self._round_abandoned = False

    # -- Gymnasium API -------------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if (
            seed is not None
            or self.game is None
            or self.game.game_over
            or self._round_open
            or self._round_abandoned
        ):
            # A round left unfinished cannot go on: a new game. `reset(seed=s)` plays the engine game of
            # seed s, the one an arena started with seed s plays (the fidelity test relies on it).
            self._new_game(seed)
        game = self.game
        assert game is not None and self.opponent is not None
        round_number = game.start_round()
        self.opponent.on_round_started(RoundStartedEvent(round_number=round_number))
        self.memory.new_round()
        self._round_open = True
        game.turn({})  # turn 1: nobody acts
        tick = tick_view(game, self.agent_id)
        obs = stored_observation(tick, self.memory, self.wave_inputs, self.threat_inputs, self.bullet_inputs)
        return obs, {
            "turn": tick.turn_number,
            "round": round_number,
            "opponent": self.opponent_name,
            "events": tick.events,
        }

    def step(
        self, action: np.ndarray, out: np.ndarray | None = None
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Gymnasium's step; `out` (the observation's width) receives the observation instead of a new array
        (the vector form)."""
        game, opponent, memory = self.game, self.opponent, self.memory
        if game is None or opponent is None or not self._round_open:
            raise RuntimeError("step() before reset() or after the round ended; call reset()")
        # A list of Python floats: the same values the features read from an array, at half the cost.
        values = action.tolist() if isinstance(action, np.ndarray) else list(action)
        me, them = self.agent_id, self.opponent_id
        extras = (self.wave_inputs, self.threat_inputs, self.bullet_inputs)
        obs, tick, r = advance(game, opponent, memory, me, them, values, self.radar_mode, out, *extras)
        info: dict[str, Any] = {"turn": tick.turn_number, "events": tick.events}
        terminated = game.round_over
        truncated = False
        if terminated:
            r += round_end_reward(memory)  # as `sacbot play` does at RoundEnded: -10 unless already counted
            info["round_result"] = self._finish_round()
        elif self.max_turns is not None and tick.turn_number >= self.max_turns:
            truncated = True
            self._round_open = False
            self._round_abandoned = True  # an unfinished round cannot go on; the next reset starts a new game
            info["round_result"] = {
                "outcome": "truncated",
                "turns": tick.turn_number,
                "opponent": self.opponent_name,
            }
        return obs, r, terminated, truncated, info

    # -- internals -----------------------------------------------------------------------------------------

    def _new_game(self, seed: int | None = None) -> None:
        if seed is None:
            seed = int(self.np_random.integers(0, 2**31 - 1))
        if self.opponent_source is not None:
            self.opponent_name, self.opponent = self.opponent_source(seed)
        else:
            self.opponent_name = self.opponents[int(self.np_random.integers(len(self.opponents)))]
            self.opponent = make_opponent(self.opponent_name, seed=seed)
        participants = [
            Participant(self.agent_id, AGENT_NAME),
            Participant(self.opponent_id, self.opponent_name),
        ]
        participants.sort(key=lambda p: p.id)
        self.game = Game(self.setup, participants, seed=seed)
        self.opponent.on_game_started(self.game.game_started_for_bot(self.opponent_id))
        self.memory.new_game()  # the wave and threat inputs' records are of one game's enemy
        self._round_open = self._round_abandoned = False

    def _finish_round(self) -> dict[str, Any]:
        game, opponent = self.game, self.opponent
        assert game is not None and opponent is not None
        self._round_open = False
        them = self.opponent_id
        if them in game.tick_bot_ids():
            opponent.on_tick(game.tick_for_bot(them))  # its last tick (it may learn from a WonRoundEvent)
        opponent.on_round_ended(game.round_ended_for_bot(them))
        if game.game_over:
            opponent.on_game_ended(game.game_ended_for_bot(them))
        winners = list(game.winner_ids)
        outcome = (
            "draw" if not winners or len(winners) > 1 else ("won" if winners == [self.agent_id] else "lost")
        )
        scores = {row.id: row.total_score for row in game.round_results()}
        return {
            "outcome": outcome,
            "turns": game.turn_number,
            "round": game.round_number,
            "opponent": self.opponent_name,
            "winner_ids": winners,
            "score": scores.get(self.agent_id, 0),
            "opponent_score": scores.get(them, 0),
        }
