"""The archive with the real SAC trainer: every tensor and Adam state round-trips, and training resumed from
an archive continues bit-identically for a fixed seed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sacbot.agent.networks import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import (
    CheckpointError,
    load_checkpoint,
    restore_trainer,
    save_checkpoint,
    save_trainer,
    specs_of,
)

SIZES = NetworkSizes(embed=16, hidden=16, head=8)


def small_trainer(seed: int, sizes: NetworkSizes = SIZES) -> SacTrainer:
    config = TrainerConfig(
        sizes=sizes, batch_size=4, burn_in=2, train_len=4, replay_capacity=512, device="cpu", seed=seed
    )
    return SacTrainer(config)


def fill(trainer: SacTrainer, rounds: int = 4, steps: int = 20) -> None:
    """The same transitions every time (a fixed generator), so two trainers hold equal replays."""
    rng = np.random.default_rng(99)
    sz = trainer.config.sizes
    for _ in range(rounds):
        for t in range(steps):
            trainer.record(
                rng.uniform(-1, 1, sz.state_dim).astype(np.float32),
                rng.uniform(-1, 1, sz.action_dim).astype(np.float32),
                float(rng.normal()),
                rng.uniform(-1, 1, sz.state_dim).astype(np.float32),
                t == steps - 1,
                rng.normal(0, 0.1, sz.hidden).astype(np.float32),
            )


def train(trainer: SacTrainer, updates: int) -> None:
    for _ in range(updates):
        assert trainer.train_step() is not None


def assert_same_state(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert sorted(a) == sorted(b)
    different = [n for n in a if a[n].dtype != b[n].dtype or a[n].tobytes() != b[n].tobytes()]
    assert not different, f"arrays differ: {different}"


def test_every_tensor_and_adam_state_round_trips(tmp_path: Path) -> None:
    trainer = small_trainer(seed=1)
    fill(trainer)
    train(trainer, 3)
    meta = save_trainer(tmp_path / "latest.zip", trainer, opponent="SpinBot")
    assert (meta.env_steps, meta.updates, meta.opponent) == (80, 3, "SpinBot")
    assert meta.network_sizes["hidden"] == 16
    saved = trainer.state_arrays()
    names = set(saved)
    for prefix in ("actor.", "critic1.", "critic2.", "target1.", "target2.", "adam.actor.", "adam.critic."):
        assert any(name.startswith(prefix) for name in names), prefix
    assert "log_alpha" in names and any(name.endswith(".exp_avg_sq") for name in names)

    other = small_trainer(seed=2)  # different initial weights and generators
    restore_trainer(tmp_path / "latest.zip", other)
    assert_same_state(other.state_arrays(), saved)
    assert (other.env_steps, other.updates) == (80, 3)
    # The actor alone, from the full archive, for the inference path.
    actor, _ = load_checkpoint(tmp_path / "latest.zip", specs_of(trainer.actor_arrays()), subset=True)
    assert_same_state(actor, trainer.actor_arrays())


def test_resumed_training_continues_bit_identically(tmp_path: Path) -> None:
    original = small_trainer(seed=5)
    fill(original)
    train(original, 3)
    save_trainer(tmp_path / "latest.zip", original)
    train(original, 4)

    resumed = small_trainer(seed=6)
    fill(resumed)  # the replay is not part of the archive; the same data goes in again
    restore_trainer(tmp_path / "latest.zip", resumed)
    train(resumed, 4)
    assert_same_state(resumed.state_arrays(), original.state_arrays())


def test_other_sizes_are_refused_naming_the_arrays_and_the_trainer_is_untouched(tmp_path: Path) -> None:
    save_trainer(tmp_path / "big.zip", small_trainer(seed=1, sizes=NetworkSizes(embed=16, hidden=24, head=8)))
    trainer = small_trainer(seed=3)
    before = trainer.state_arrays()
    with pytest.raises(CheckpointError, match=r"does not match the networks: .*shape \(72, 16\), expected"):
        restore_trainer(tmp_path / "big.zip", trainer)
    assert_same_state(trainer.state_arrays(), before)
    # A missing Adam moment is named too.
    arrays = dict(before)
    del arrays["adam.critic.critic2.q.weight.exp_avg_sq"]
    save_checkpoint(tmp_path / "partial.zip", arrays, None)
    with pytest.raises(CheckpointError, match=r"missing adam.critic.critic2.q.weight.exp_avg_sq"):
        restore_trainer(tmp_path / "partial.zip", trainer)
