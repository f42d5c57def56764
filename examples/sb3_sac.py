"""Stable-Baselines3's SAC on sacbot's Gymnasium environment, for comparison with `sacbot train-fast`.

    pip install -e '.[sb3]'
    python examples/sb3_sac.py --steps 20000 --opponent Target --seed 1
    python examples/sb3_sac.py --steps 20000 --opponent Target --compare weights/fast/latest.zip

Trains SB3's SAC (its `MlpPolicy`: no recurrent state, so it sees only the current 17-dim observation) for
`--steps` environment steps against one opponent, then plays `--eval-rounds` rounds with deterministic actions
and prints the win rate and score share. `--compare FILE` also plays a sacbot checkpoint (its recurrent actor,
deterministic, the hidden state reset every round) on the same seeded rounds, so the two lines compare. The
environment is `sacbot/TankRoyale-v0` as `sacbot train-fast` plays it: rounds cut at 5,000 turns, the
checkpoint's radar mode (spin for SB3), 10 rounds per game.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import gymnasium
import numpy as np
import torch
from stable_baselines3 import SAC

from sacbot.agent.inference import FastActor
from sacbot.agent.sizes import NetworkSizes
from sacbot.checkpoint import load_checkpoint
from sacbot.env import ENV_ID

MAX_TURNS = 5_000  # train-fast's cut for a round
EVAL_SEED = 10_000  # the eval games' seeds follow from it, the same for every policy

Act = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class EvalResult:
    rounds: int
    wins: int
    score_share: float  # own / (own + enemy) round score over the finished rounds

    @property
    def win_rate(self) -> float:
        return self.wins / self.rounds if self.rounds else 0.0


def make_env(opponent: str, radar_mode: str = "spin") -> gymnasium.Env[np.ndarray, np.ndarray]:
    return gymnasium.make(ENV_ID, opponent=opponent, max_turns=MAX_TURNS, radar_mode=radar_mode)


def evaluate(
    env: gymnasium.Env[np.ndarray, np.ndarray], new_round: Callable[[], Act], rounds: int
) -> EvalResult:
    """`rounds` rounds; `new_round()` gives the acting function of one round (a fresh recurrent state)."""
    wins, own, theirs = 0, 0.0, 0.0
    obs, _ = env.reset(seed=EVAL_SEED)
    for k in range(rounds):
        if k:
            obs, _ = env.reset()
        act = new_round()
        while True:
            obs, _, terminated, truncated, info = env.step(act(obs))
            if terminated or truncated:
                break
        result = info["round_result"]
        wins += result["outcome"] == "won"
        own += float(result.get("score", 0.0))
        theirs += float(result.get("opponent_score", 0.0))
    return EvalResult(rounds, wins, own / (own + theirs) if own + theirs > 0 else 0.5)


def sb3_round(model: SAC) -> Callable[[], Act]:
    def new_round() -> Act:
        def act(obs: np.ndarray) -> np.ndarray:
            action, _ = model.predict(obs, deterministic=True)
            return np.asarray(action, np.float32)

        return act

    return new_round


def sacbot_round(checkpoint: Path) -> tuple[Callable[[], Act], str]:
    """The checkpoint's actor as `sacbot play --eval` runs it, and the radar mode it was trained with."""
    arrays, meta = load_checkpoint(checkpoint)
    known = {f.name for f in fields(NetworkSizes)}
    stored = dict(meta.network_sizes) if meta is not None else {}
    actor = FastActor(arrays, NetworkSizes(**{k: v for k, v in stored.items() if k in known}))
    radar = str(meta.extra.get("radar_mode") or "spin") if meta is not None else "spin"

    def new_round() -> Act:
        hidden = actor.initial_hidden()

        def act(obs: np.ndarray) -> np.ndarray:
            nonlocal hidden
            action, hidden = actor.step(obs, hidden, deterministic=True)
            return action

        return act

    return new_round, radar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="environment steps to train")
    parser.add_argument("--opponent", default="Target", help="a built-in opponent (docs/opponents.md)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval-rounds", type=int, default=100, help="deterministic rounds after training")
    parser.add_argument("--learning-starts", type=int, default=2_000, help="random steps before updates")
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--save", type=Path, help="write the trained SB3 model here (.zip)")
    parser.add_argument(
        "--compare", type=Path, help="also evaluate this sacbot checkpoint on the same rounds"
    )
    args = parser.parse_args()

    torch.set_num_threads(args.torch_threads)
    env = make_env(args.opponent)
    model = SAC(
        "MlpPolicy", env, learning_starts=args.learning_starts, seed=args.seed, device="cpu", verbose=0
    )
    started = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - started
    updates = model._n_updates  # SB3 keeps the count only here
    print(f"SB3 SAC: {args.steps} env steps, {updates} updates in {seconds:.1f} s vs {args.opponent}")
    if args.save is not None:
        model.save(args.save)
    result = evaluate(make_env(args.opponent), sb3_round(model), args.eval_rounds)
    print(
        f"SB3 SAC (deterministic): won {result.wins}/{result.rounds} rounds "
        f"(win rate {result.win_rate:.3f}), score share {result.score_share:.3f}"
    )
    if args.compare is not None:
        new_round, radar = sacbot_round(args.compare)
        ours = evaluate(make_env(args.opponent, radar), new_round, args.eval_rounds)
        print(
            f"sacbot {args.compare} (deterministic, radar {radar}): won {ours.wins}/{ours.rounds} rounds "
            f"(win rate {ours.win_rate:.3f}), score share {ours.score_share:.3f}"
        )


if __name__ == "__main__":
    main()
