"""SAC-GRU learner: features (state, action, reward), networks, sequence replay, trainer, numpy inference.

Heavy modules (torch) are imported by their users: `sacbot.agent.features` and `sacbot.agent.inference` stay
torch-free for the realtime thread.
"""
