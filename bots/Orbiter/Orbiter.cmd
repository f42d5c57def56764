@echo off
rem The opponent Orbiter (sacbot), started by a Tank Royale booter on Windows.
rem Python: %SACBOT_PYTHON%, else the repo .venv, else python.
setlocal
set "HERE=%~dp0"
set "PY=%SACBOT_PYTHON%"
if not defined PY if exist "%HERE%..\..\.venv\Scripts\python.exe" set "PY=%HERE%..\..\.venv\Scripts\python.exe"
if not defined PY set "PY=python"
"%PY%" -m sacbot opponent Orbiter --bot-json "%HERE%Orbiter.json" %*
