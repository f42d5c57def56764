#!/usr/bin/env bash
# The opponent Orbiter (sacbot). Started by a Tank Royale booter (working dir: this folder; SERVER_URL,
# SERVER_SECRET and BOT_* in the env) or by hand. Python: $SACBOT_PYTHON, else the repository's .venv next to this
# bot folder, else python3.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${SACBOT_PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x "$here/../../.venv/bin/python" ]; then
    py="$here/../../.venv/bin/python"
  else
    py="python3"
  fi
fi
exec "$py" -m sacbot opponent Orbiter --bot-json "$here/Orbiter.json" "$@"
