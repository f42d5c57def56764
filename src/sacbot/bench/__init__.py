"""Benchmarks: one module per measured area, each `bench_*` function returns a dict of figures that
`sacbot bench ...` prints (medians; no test asserts a wall-clock time).

`engine` (turns/s in-process), `protocol` (the codec), `arena` (a 1v1 over WebSocket, with its bot process
`benchbot`), `play` (tick-to-intent latency of `sacbot play`), `env` (Gymnasium steps/s), `trainer` (updates/s
and inference latency, against the plain update in `eager_reference`) and `ray` (`sacbot[ray]`). A top layer:
it may import any area, and only `sacbot.cli.bench` and the tests import it.
"""
