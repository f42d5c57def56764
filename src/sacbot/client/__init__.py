"""Bot side of the Tank Royale protocol: a sans-I/O session plus a thin asyncio `websockets` transport.

`run_bot(policy, identity, server_url, server_secret)` (blocking) or `await play(...)`; a policy is any object
with the `BotPolicy` methods; `resolve_identity(...)` gives the BotHandshake identity.
"""

from sacbot.client.identity import BotIdentity, load_identity_json, parse_initial_position, resolve_identity
from sacbot.client.policy import BotPolicy
from sacbot.client.session import (
    PROTOCOL_MAJOR,
    BotSession,
    Phase,
    SessionStats,
    check_server_version,
    complete_intent,
)
from sacbot.client.transport import SessionEnd, play, run_bot

__all__ = [
    "PROTOCOL_MAJOR",
    "BotIdentity",
    "BotPolicy",
    "BotSession",
    "Phase",
    "SessionEnd",
    "SessionStats",
    "check_server_version",
    "complete_intent",
    "load_identity_json",
    "parse_initial_position",
    "play",
    "resolve_identity",
    "run_bot",
]
