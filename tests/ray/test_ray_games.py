"""`sacbot tournament --ray` and `sacbot eval --ray`: each game a Ray task on a local Ray instance (2 CPUs),
with its own embedded arena and bot processes; the results are the local run's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from sacbot.campaign.evaluate import evaluate
from sacbot.campaign.tournament import run_tournament
from sacbot.distributed.games import evaluate_ray, play_pairs_ray

BOTS = Path(__file__).resolve().parents[2] / "bots"


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def test_a_seeded_tournament_on_ray_equals_the_local_one(tmp_path: Path) -> None:
    dirs = [str(BOTS / name) for name in ("Target", "SpinBot", "Walls")]
    local = run_tournament(dirs, 2, "1v1", tmp_path / "local", workers=1, seed=11)
    remote = run_tournament(dirs, 2, "1v1", tmp_path / "ray", seed=11, play_all=play_pairs_ray)
    assert len(remote.played) == 3 and (tmp_path / "ray" / "pairs.jsonl").is_file()
    assert (tmp_path / "ray" / "results.json").is_file() and (tmp_path / "ray" / "heatmap.png").is_file()
    for mine, theirs in zip(remote.pairs, local.pairs, strict=True):
        assert (mine.a, mine.b, mine.seed, mine.rounds) == (theirs.a, theirs.b, theirs.seed, theirs.rounds)
        assert mine.wins_a + mine.wins_b + mine.draws == 2
        # Real-time games: two runs (local or Ray) of SpinBot vs Walls may differ by a turn's timing under
        # load; Target never fires, so the rounds of its pairs have one winner whatever the timing.
        if "Target" in (mine.a, mine.b):
            assert mine.round_winners == theirs.round_winners
            assert "Target" not in mine.round_winners


def test_an_eval_on_ray_plays_each_opponent_as_a_task(tmp_path: Path) -> None:
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig
    from sacbot.checkpoint import CheckpointMeta, save_checkpoint

    trainer = SacTrainer(TrainerConfig(device="cpu"))
    checkpoint = tmp_path / "policy.zip"
    save_checkpoint(checkpoint, trainer.state_arrays(), CheckpointMeta(0, 0, trainer.network_sizes()))
    local = evaluate(checkpoint, ["Target"], 1)
    remote = evaluate(checkpoint, ["Target", "SpinBot"], 1, remote=evaluate_ray)
    assert [name for name, _ in remote] == ["Target", "SpinBot"]
    assert remote[0][1].rounds == local[0][1].rounds == 1 and remote[1][1].rounds == 1
    # Real-time games (the untrained policy's, here) differ between any two runs on a loaded machine: the
    # figures are checked for what a game gives, not for equality.
    for _, score in remote:
        assert 0 <= score.wins <= 1 and 0.0 <= score.score_share <= 1.0 and score.bullet_damage >= 0.0
