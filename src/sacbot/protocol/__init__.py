"""Tank Royale wire messages for every role (bot, observer, controller) and the one codec; no I/O.

`from sacbot.protocol import TickEventForBot, BotIntent, encode, decode, ProtocolError`. One class per schema
file in tests/protocol/schemas (PascalCase of the file name), snake_case attributes, the wire name of a
message in its class attribute `type`. Constructors do not validate: our own producers (engine, policies)
build objects directly at full speed; `decode` checks foreign input field by field.
"""

from sacbot.protocol import models
from sacbot.protocol._convert import ProtocolError
from sacbot.protocol.codec import (
    decode,
    encode,
    encode_bytes,
    encode_dict_bytes,
    from_dict,
    to_dict,
)
from sacbot.protocol.models import *  # noqa: F403

__all__ = [
    *models.__all__,
    "ProtocolError",
    "decode",
    "encode",
    "encode_bytes",
    "encode_dict_bytes",
    "from_dict",
    "to_dict",
]
