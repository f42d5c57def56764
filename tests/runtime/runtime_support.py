"""Constants shared by the runtime tests (the fixtures are in conftest.py): the repository's bots and small
settings for `sacbot play`."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "bots"
OPPONENT = BOTS / "TrackFire"  # kills an untrained SacBot in a few hundred turns: short rounds
SMALL = {
    "SACBOT_WARMUP_ROUNDS": "1",
    "SACBOT_UTD_RATIO": "0",
    "SACBOT_BATCH_SIZE": "8",
    "SACBOT_PUBLISH_EVERY": "2",
    "SACBOT_SHIPPED": "0",  # a fresh init, not the shipped actor, when the weights folder is empty
}
