"""sacbot: a recurrent Soft Actor-Critic tank for Robocode Tank Royale."""

__version__ = "0.1.0"
