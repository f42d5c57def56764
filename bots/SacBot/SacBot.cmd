@echo off
rem Started by a Tank Royale booter on Windows. Python: %SACBOT_PYTHON%, else the repo .venv, else python.
setlocal
set "HERE=%~dp0"
if not defined SACBOT_BOT_JSON set "SACBOT_BOT_JSON=%HERE%SacBot.json"
set "PY=%SACBOT_PYTHON%"
if not defined PY if exist "%HERE%..\..\.venv\Scripts\python.exe" set "PY=%HERE%..\..\.venv\Scripts\python.exe"
if not defined PY set "PY=python"
"%PY%" -m sacbot play %*
