"""The threat inputs' visits (`NetworkSizes.threat_visits`, SACBOT_THREAT_VISITS): what the inputs mean
travels with the networks, from the setting or the checkpoint to every reader of the threat record."""

from __future__ import annotations

import numpy as np
import pytest

from sacbot.agent.sizes import NetworkSizes
from sacbot.checkpoint import CheckpointMeta
from sacbot.env import TankRoyaleEnv, VecTankRoyaleEnv
from sacbot.export.policy import sizes_from_dict
from sacbot.runtime.startup import network_sizes_for, sizes_said, threat_visits_for
from sacbot.settings import load_sacbot_settings


def test_the_visits_are_the_settings_else_the_checkpoints_else_none(monkeypatch: pytest.MonkeyPatch) -> None:
    built = CheckpointMeta(network_sizes={**NetworkSizes().as_dict(), "threat_visits": 0.3})
    assert threat_visits_for(None, None) == 0.0 and threat_visits_for(None, built) == 0.3
    assert threat_visits_for(0.0, built) == 0.0
    for odd in (2.0, -0.1, "0.3", None):
        assert threat_visits_for(None, CheckpointMeta(network_sizes={"threat_visits": odd})) == 0.0
    assert sizes_from_dict({}).threat_visits == 0.0
    assert sizes_from_dict({"threat_visits": 0.3}).threat_visits == 0.3
    with pytest.raises(ValueError, match="threat_visits"):
        sizes_from_dict({"threat_visits": 1.5})
    monkeypatch.setenv("SACBOT_THREAT_INPUTS", "1")
    monkeypatch.setenv("SACBOT_THREAT_VISITS", "0.3")
    sizes = network_sizes_for(load_sacbot_settings(), None)
    assert sizes.threat_visits == 0.3
    assert any(line.startswith("threat inputs' visits 0.3") for line in sizes_said(sizes, training=False))
    assert not any("visits" in line for line in sizes_said(NetworkSizes(threat_inputs=True), training=False))


def test_the_environments_record_the_visits_with_the_networks_weight() -> None:
    """Every environment train-fast steps builds its memory with the networks' weight: against Gunner,
    driving in circles that turn back every 20 turns, its waves reach us, and the ones that miss add where
    we were to the record of visits."""
    envs = VecTankRoyaleEnv(
        2, "Gunner", radar_mode="lock", sizes=NetworkSizes(threat_inputs=True, threat_visits=0.3)
    )
    assert [env.memory.threat_visits for env in envs.envs] == [0.3, 0.3]
    plain = TankRoyaleEnv("Gunner", radar_mode="lock", sizes=NetworkSizes(threat_inputs=True))
    assert plain.memory.threat_visits == 0.0
    plain.close()
    envs.reset(seed=4)
    for turn in range(400):
        way = 1.0 if turn // 20 % 2 else -1.0
        envs.step(np.tile(np.array([0.5, way, 0.0, 0.0], np.float32), (2, 1)))
    memory = envs.envs[0].memory
    envs.close()
    assert memory.threat_passed > 0.0 and memory.threat_hits > 0.0
    assert sum(memory.threat_visits_bins) > 0.0  # where we were as its waves passed, apart from its hits
