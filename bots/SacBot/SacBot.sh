#!/usr/bin/env bash
# Started by a Tank Royale booter (working dir: this folder; SERVER_URL, SERVER_SECRET and BOT_* in the env).
# Python: $SACBOT_PYTHON, else the repository's .venv next to this bot folder, else python3.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${SACBOT_PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x "$here/../../.venv/bin/python" ]; then
    py="$here/../../.venv/bin/python"
  else
    py="python3"
  fi
fi
# The identity (and so the default weights folder) is this folder's JSON unless SACBOT_BOT_JSON names another.
export SACBOT_BOT_JSON="${SACBOT_BOT_JSON:-$here/SacBot.json}"
exec "$py" -m sacbot play "$@"
