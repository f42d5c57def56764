"""Campaigns: chunked training with crash-restart, periodic eval and best-gating; eval games; twins.

Pure parts (config, sampler, scoring, log/resume, retry, liveness) are plain functions and classes; `runner`
is the thin process shell around the arena, the booter and `sacbot play`.
"""
