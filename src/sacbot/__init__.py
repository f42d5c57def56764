"""sacbot: a recurrent Soft Actor-Critic tank for Robocode Tank Royale."""

from sacbot import compiled as _compiled

__version__ = "0.1.0"

# The mypyc-compiled engine, where a build of exactly these sources exists (`sacbot.compiled`).
_compiled.install()
