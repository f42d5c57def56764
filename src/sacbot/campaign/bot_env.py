"""The bots of a campaign game: where their folders are, the environment each one boots with (the SACBOT_*
settings of a training chunk or an eval game, none of them for the opponent), and stopping them afterwards."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from sacbot.campaign.config import Campaign, opponent_name
from sacbot.errors import UserError
from sacbot.rundir import RunPaths

if TYPE_CHECKING:
    from sacbot.arena.booter import Booter


def resolve_bot_dir(entry: str, bots_dirs: list[Path]) -> Path:
    """A pool entry (a name under one of the bots dirs, or a path) -> its bot directory."""
    candidates = [Path(entry)] if "/" in entry else [root / entry for root in bots_dirs]
    for folder in candidates:
        if (folder / f"{folder.name}.json").is_file() or (folder / f"{folder.name}.sh").is_file():
            return folder
    where = ", ".join(str(c) for c in candidates)
    raise UserError(f"opponent {entry!r}: no bot directory found (looked in {where})", exit_code=2)


def default_bots_dirs(campaign_dirs: list[Path]) -> list[Path]:
    """The file's bot dirs, then the project's own `bots/` (an editable install's checkout)."""
    from sacbot.runtime.paths import repo_bot_dir

    own = repo_bot_dir().parent
    dirs = list(campaign_dirs)
    if own.is_dir() and all(d.resolve() != own for d in dirs if d.exists()):
        dirs.append(own)
    return dirs


class BotDirs:
    """The campaign's bot folders: the training bot's, and each opponent's by its pool entry."""

    def __init__(self, campaign: Campaign) -> None:
        from sacbot.arena.booter import read_bot_dir

        self.bots_dirs = default_bots_dirs(list(campaign.bots_dirs))
        self.sacbot_dir = campaign.sacbot_dir or resolve_bot_dir("SacBot", self.bots_dirs)
        self.sacbot_name = read_bot_dir(self.sacbot_dir).name
        # Every opponent must exist before the first chunk, not hours later when the sampler first draws it.
        for entry in [*campaign.opponents, *campaign.eval.opponents]:
            resolve_bot_dir(entry, self.bots_dirs)

    def opponent(self, entry: str) -> tuple[Path, str]:
        """An opponent's (bot directory, bot name); it must not share the training bot's name."""
        from sacbot.arena.booter import read_bot_dir

        folder = resolve_bot_dir(entry, self.bots_dirs)
        name = read_bot_dir(folder).name
        if name == self.sacbot_name:
            raise UserError(f"opponent {entry!r} reports the training bot's name {name!r}", 2)
        return folder, name


def chunk_env(campaign: Campaign, paths: RunPaths, chunk: int, attempt: int, opponent: str) -> dict[str, str]:
    """The training bot's settings for one attempt of a chunk: it trains in the run's weights folder, from
    `latest` when there is one."""
    env = {
        **campaign.bot_for().environment(),
        "SACBOT_WEIGHTS_DIR": str(paths.weights.folder.resolve()),
        "SACBOT_OPPONENT": opponent_name(opponent),
        "SACBOT_EVAL_MODE": "0",
        "SACBOT_SEED": str(campaign.seed * 100_003 + chunk * 101 + attempt),
        "SACBOT_SHIPPED": "0",  # a campaign trains from its own checkpoints, or from scratch
    }
    if paths.latest.is_file():
        env["SACBOT_CHECKPOINT"] = str(paths.latest.resolve())  # resume the full training state
    if campaign.log.tensorboard is not None:
        env["SACBOT_TENSORBOARD"] = str(campaign.log.tensorboard.resolve())
    return env


def eval_env(campaign: Campaign, paths: RunPaths, checkpoint: Path, opponent: str) -> dict[str, str]:
    """The training bot's settings for an eval game: eval mode from `checkpoint`, in the eval weights folder
    (eval mode writes nothing; never the training folder)."""
    return {
        **campaign.bot_for().environment(),
        "SACBOT_WEIGHTS_DIR": str(paths.eval_weights.folder.resolve()),
        "SACBOT_OPPONENT": opponent_name(opponent),
        "SACBOT_EVAL_MODE": "1",
        "SACBOT_CHECKPOINT": str(checkpoint.resolve()),
        "SACBOT_SEED": str(campaign.seed),
    }


def game_booters(
    url: str, bot_secret: str | None, logs: Path, paths: RunPaths, bot_env: Mapping[str, str]
) -> tuple[Booter, Booter]:
    """(the opponent's booter, the training bot's booter). Two booters, because the training bot's settings
    must not reach the opponent."""
    from sacbot.arena.booter import Booter

    # SACBOT_CAMPAIGN_RUN marks every process of this run (to find them; tests look for orphans).
    common = {"SACBOT_PYTHON": sys.executable, "SACBOT_CAMPAIGN_RUN": str(paths.out.resolve())}
    opponents = Booter(url, bot_secret, log_dir=logs, extra_env=common)
    trainee = Booter(url, bot_secret, log_dir=logs, extra_env={**common, **bot_env})
    return opponents, trainee


def stop_bots(*booters: Booter) -> None:
    """Stop every bot the booters started, each booter in turn."""
    for booter in booters:
        for proc in booter.bots:
            signal_group(proc.pid, signal.SIGCONT)  # a frozen bot must be able to act on SIGTERM
        booter.stop_all()


def signal_group(pid: int, sig: int) -> None:
    """Send `sig` to a bot's process group; one already gone is no error."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
