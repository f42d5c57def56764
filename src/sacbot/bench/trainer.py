"""Benchmarks of the learning core (`sacbot bench inference|trainer`): they measure and return figures."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sacbot.agent.trainer import SacTrainer


def _synthetic_rounds(trainer: SacTrainer, rounds: int = 8, length: int = 400, seed: int = 0) -> None:
    """Fill the replay with random rounds of the configured shapes (the bench measures compute, not data)."""
    sz = trainer.config.sizes
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        done = np.zeros(length, np.float32)
        done[-1] = 1.0
        trainer.replay.add_round(
            rng.uniform(-1, 1, (length + 1, sz.stored_dim)).astype(np.float32),
            rng.uniform(-1, 1, (length, sz.action_dim)).astype(np.float32),
            rng.standard_normal(length).astype(np.float32),
            done,
            np.tanh(rng.standard_normal((length, sz.hidden))).astype(np.float32),
        )


def gemm_gflops(device: str = "cpu", seconds: float = 0.25) -> float:
    """The machine's matmul speed right now, in GFLOP/s: one critic's input projection over a window's 1,024
    trained rows, (1024 x 128) . (128 x 384), the shape of most of an update's products, repeated for
    `seconds` under the current thread count. A shared VM's core runs up to a quarter slower in its busy
    minutes; this figure, taken next to a rate, says which minutes the rate comes from."""
    import torch

    dev = torch.device(device)
    a = torch.rand(1024, 128, device=dev)
    b = torch.rand(128, 384, device=dev)
    out = torch.empty(1024, 384, device=dev)
    torch.mm(a, b, out=out)  # warm-up: the first call sets up the library

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize()

    sync()
    count = 0
    t0 = time.perf_counter()
    while True:
        for _ in range(8):
            torch.mm(a, b, out=out)
        count += 8
        sync()
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return round(2.0 * 1024 * 128 * 384 * count / elapsed / 1e9, 1)


def bench_trainer(
    batch: int = 64, threads: int = 1, seconds: float = 10.0, device: str = "cpu", recipe: bool = False
) -> dict[str, object]:
    """SAC-GRU update passes per wall-clock second at the default sizes and terms (after two warm-up
    passes), the 10th, 50th and 90th percentiles of one pass's time, and the machine's matmul speed just
    before and just after (`gemm_gflops`): on a shared VM the rate follows its busy minutes, and these show
    how much. `recipe`: the networks' inputs and the training terms of the SACBOT_* settings instead (what
    a campaign's `[bot]` table sets, through `trainer_config_for` as the learner shells build it); the
    figures then name the settings that differ from the defaults."""
    import torch

    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig

    torch.set_num_threads(threads)
    chosen: dict[str, object] = {}
    if recipe:
        from sacbot.runtime.startup import RECIPE_SETTINGS, network_sizes_for, trainer_config_for
        from sacbot.settings import load_sacbot_settings

        settings = load_sacbot_settings()
        sizes = network_sizes_for(settings, None)
        config = trainer_config_for(
            settings, sizes, batch_size=batch, device=device, replay_capacity=8 * 400,
            target_entropy=settings.target_entropy,
        )  # fmt: skip
        default = TrainerConfig()
        chosen = {name: getattr(config, name) for name in RECIPE_SETTINGS}
        chosen = {name: value for name, value in chosen.items() if value != getattr(default, name)}
        chosen.update(
            {name: value for name, value in sizes.as_dict().items() if value != default.sizes.as_dict()[name]}
        )
        if settings.target_entropy is not None:
            chosen["target_entropy"] = settings.target_entropy
    else:
        config = TrainerConfig(batch_size=batch, device=device, replay_capacity=8 * 400)
    trainer = SacTrainer(config)
    _synthetic_rounds(trainer)
    for _ in range(2):
        trainer.train_step()
    gemm_before = gemm_gflops(str(trainer.device))  # ends in a device sync: the clock starts on an idle GPU
    passes: list[float] = []
    cpu0 = time.thread_time()
    t0 = last = time.perf_counter()
    while True:
        trainer.train_step()  # each pass ends in one host sync (its metrics), so the clock is honest on cuda
        now = time.perf_counter()
        passes.append(now - last)
        last = now
        if now - t0 >= seconds:
            break
    elapsed = last - t0
    cpu = time.thread_time() - cpu0
    gemm_after = gemm_gflops(str(trainer.device))
    n = len(passes)
    p10, p50, p90 = (round(float(v) * 1e3, 2) for v in np.percentile(passes, [10, 50, 90]))
    return {
        "updates_per_s": round(n / elapsed, 2),
        "batch": batch,
        "threads": threads,
        "device": str(trainer.device),
        "updates": n,
        "updates_per_cpu_s": round(n / cpu, 2) if cpu > 0 else None,
        "update_ms_p10": p10,
        "update_ms_p50": p50,
        "update_ms_p90": p90,
        "gemm_gflops_before": gemm_before,
        "gemm_gflops_after": gemm_after,
        **({"recipe": chosen} if recipe else {}),
    }


def compare_eager(batch: int = 64, threads: int = 1, seconds: float = 10.0) -> dict[str, object]:
    """Ours against the straightforward eager update (`sacbot.bench.eager_reference`) on the same batches,
    alternating one update of each in this process, so machine noise hits both alike. Medians per update."""
    import torch

    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig
    from sacbot.bench.eager_reference import EagerSac

    torch.set_num_threads(threads)
    ours = SacTrainer(TrainerConfig(batch_size=batch, device="cpu", replay_capacity=8 * 400))
    _synthetic_rounds(ours)
    eager = EagerSac(ours.config.sizes, burn_in=ours.config.burn_in)
    rng = np.random.default_rng(1)
    for _ in range(2):
        b = ours.replay.sample(batch, rng)
        ours.update(b)
        eager.update(b)
    ours_t: list[float] = []
    eager_t: list[float] = []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(ours_t) < 3:
        b = ours.replay.sample(batch, rng)
        t0 = time.perf_counter()
        ours.update(b)
        t1 = time.perf_counter()
        eager.update(b)
        t2 = time.perf_counter()
        ours_t.append(t1 - t0)
        eager_t.append(t2 - t1)
    ours_s, eager_s = float(np.median(ours_t)), float(np.median(eager_t))
    return {
        "updates_per_s": round(1.0 / ours_s, 2),
        "eager_updates_per_s": round(1.0 / eager_s, 2),
        "speedup_vs_eager": round(eager_s / ours_s, 3),
        "batch": batch,
        "threads": threads,
        "device": "cpu",
        "pairs": len(ours_t),
    }


def _percentiles(samples: list[float]) -> tuple[float, float]:
    a = np.asarray(samples) * 1e6
    return round(float(np.percentile(a, 50)), 2), round(float(np.percentile(a, 99)), 2)


def bench_inference(steps: int = 20000, seed: int = 0) -> dict[str, float | bool]:
    """One actor step at batch 1: numpy fast path against the torch actor (no autograd), in microseconds."""
    import torch

    from sacbot.agent.inference import FastActor
    from sacbot.agent.networks import Actor, NetworkSizes

    torch.set_num_threads(1)
    sizes = NetworkSizes()
    torch.manual_seed(seed)
    actor = Actor(sizes).eval()
    arrays = {f"actor.{k}": v.detach().numpy().copy() for k, v in actor.named_parameters()}
    fast = FastActor(arrays, sizes, seed=seed)
    rng = np.random.default_rng(seed)
    states = rng.uniform(-1, 1, (256, sizes.state_dim)).astype(np.float32)
    clock = time.perf_counter
    h = fast.initial_hidden()
    fast_t: list[float] = []
    for i in range(steps):
        s = states[i & 255]
        t0 = clock()
        _, h = fast.step(s, h)
        fast_t.append(clock() - t0)
    torch_t: list[float] = []
    th = actor.initial_hidden(1)
    ts = torch.from_numpy(states).unsqueeze(1)
    with torch.inference_mode():
        for i in range(steps):
            s_t = ts[i & 255 : (i & 255) + 1]
            t0 = clock()
            mu, _, out = actor(s_t, th)
            torch.tanh(mu)
            th = out[:, -1]
            torch_t.append(clock() - t0)
    f50, f99 = _percentiles(fast_t[100:])
    t50, t99 = _percentiles(torch_t[100:])
    return {
        "fast_p50_us": f50,
        "fast_p99_us": f99,
        "torch_p50_us": t50,
        "torch_p99_us": t99,
        "fast_native": fast.native,  # the C kernel (True) or the numpy fallback
    }
