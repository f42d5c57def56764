"""`sacbot export-bot`: a bot folder that plays a checkpoint on the official Python Bot API, no torch.

`writer` builds the folder (project side). `policy` and `botfile` are shipped inside it: `policy` (with the
project's own feature and inference modules, copied unchanged) turns the official API's ticks into intents;
`botfile` becomes `<Name>.py`, the official `Bot` subclass the booter starts.
"""
