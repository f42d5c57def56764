"""The learner's checkpoint arrays: the stable name, shape and dtype of every array a `SacTrainer` saves
(actor, critic1/2, target1/2, log_alpha, Adam state, random generators, counters), taking them out as numpy
arrays and putting them back. The trainer holds its lock around these and rebuilds its published snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

if TYPE_CHECKING:
    from sacbot.agent.trainer import SacTrainer

# Stacked critic parameter -> the per-critic name it is saved under (as a torch.nn critic would name it).
CRITIC_NAMES = {
    "fc_in_weight": "fc_in.weight",
    "fc_in_bias": "fc_in.bias",
    "gru_weight_ih": "gru.weight_ih_l0",
    "gru_weight_hh": "gru.weight_hh_l0",
    "gru_bias_ih": "gru.bias_ih_l0",
    "gru_bias_hh": "gru.bias_hh_l0",
    "head_weight": "fc_head.weight",
    "head_bias": "fc_head.bias",
    "q_weight": "q.weight",
    "q_bias": "q.bias",
}
ADAM_KEYS = ("step", "exp_avg", "exp_avg_sq")


def named_tensors(trainer: SacTrainer) -> dict[str, tuple[Tensor, int | None]]:
    """Every saved tensor: name -> (tensor, index into the stacked critic dim or None)."""
    out: dict[str, tuple[Tensor, int | None]] = {}
    for name, p in trainer.actor.named_parameters():
        out[f"actor.{name}"] = (p, None)
    for prefix, module in (("critic", trainer.critic), ("target", trainer.target)):
        for name, p in module.named_parameters():
            for i in (0, 1):
                out[f"{prefix}{i + 1}.{CRITIC_NAMES[name]}"] = (p, i)
    out["log_alpha"] = (trainer.log_alpha, None)
    for oname, opt, named in (
        ("actor", trainer.actor_opt, [(f"actor.{n}", p, None) for n, p in trainer.actor.named_parameters()]),
        (
            "critic",
            trainer.critic_opt,
            [
                (f"critic{i + 1}.{CRITIC_NAMES[n]}", p, i)
                for n, p in trainer.critic.named_parameters()
                for i in (0, 1)
            ],
        ),
        ("alpha", trainer.alpha_opt, [("log_alpha", trainer.log_alpha, None)]),
    ):
        for pname, param, idx in named:
            state = opt.state[param]
            for key in ADAM_KEYS:
                t = state[key]
                out[f"adam.{oname}.{pname}.{key}"] = (t, None if key == "step" else idx)
    return out


def state_arrays(trainer: SacTrainer) -> dict[str, np.ndarray]:
    """Every tensor of the learner, its random generators and counters as fresh numpy arrays (call it
    between passes, under the trainer's lock)."""
    out: dict[str, np.ndarray] = {}
    for name, (t, idx) in named_tensors(trainer).items():
        v = t.detach() if idx is None else t.detach()[idx]
        out[name] = v.to("cpu", copy=True).numpy()
    out["rng.torch"] = trainer.generator.get_state().numpy().copy()
    out["rng.numpy"] = np_rng_to_array(trainer.np_rng)
    out["counters.env_steps"] = np.array(trainer.env_steps, np.int64)
    out["counters.updates"] = np.array(trainer.updates, np.int64)
    out["counters.actor_version"] = np.array(trainer.snapshot.version, np.int64)
    return out


def array_specs(trainer: SacTrainer) -> dict[str, tuple[tuple[int, ...], str]]:
    """name -> (shape, dtype) of every array `state_arrays` gives (and `load_arrays` expects)."""
    specs: dict[str, tuple[tuple[int, ...], str]] = {}
    for name, (t, idx) in named_tensors(trainer).items():
        shape = tuple(t.shape) if idx is None else tuple(t.shape[1:])
        specs[name] = (shape, str(t.dtype).removeprefix("torch."))
    specs["rng.torch"] = ((len(trainer.generator.get_state()),), "uint8")
    specs["rng.numpy"] = ((6,), "uint64")
    for c in ("env_steps", "updates", "actor_version"):
        specs[f"counters.{c}"] = ((), "int64")
    return specs


def check_arrays(specs: Mapping[str, tuple[tuple[int, ...], str]], arrays: Mapping[str, np.ndarray]) -> None:
    """Raise ValueError naming the first array of `specs` that `arrays` lacks or holds in another shape or
    dtype."""
    for name, (shape, dtype) in specs.items():
        if name not in arrays:
            raise ValueError(f"checkpoint lacks array {name!r}")
        a = np.asarray(arrays[name])
        if tuple(a.shape) != shape or str(a.dtype) != dtype:
            raise ValueError(f"array {name!r} is {a.dtype}{list(a.shape)}, expected {dtype}{list(shape)}")


def load_arrays(trainer: SacTrainer, arrays: Mapping[str, np.ndarray]) -> None:
    """Copy checked arrays into the trainer's tensors, random generators and counters (under its lock)."""
    with torch.no_grad():
        for name, (t, idx) in named_tensors(trainer).items():
            src = torch.from_numpy(np.array(arrays[name])).to(t.device)
            (t if idx is None else t[idx]).copy_(src)
    trainer.generator.set_state(torch.from_numpy(np.array(arrays["rng.torch"])))
    trainer.np_rng = array_to_np_rng(np.asarray(arrays["rng.numpy"]))
    trainer.env_steps = int(arrays["counters.env_steps"])
    trainer.updates = int(arrays["counters.updates"])


def np_rng_to_array(rng: np.random.Generator) -> np.ndarray:
    """A PCG64 generator's whole state as six uint64 (128-bit state and increment split in halves)."""
    st = rng.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise ValueError("only PCG64 generators are saved")
    mask = (1 << 64) - 1
    s, inc = st["state"]["state"], st["state"]["inc"]
    return np.array([s >> 64, s & mask, inc >> 64, inc & mask, st["has_uint32"], st["uinteger"]], np.uint64)


def array_to_np_rng(a: np.ndarray) -> np.random.Generator:
    """The generator `np_rng_to_array` saved, continuing where it stopped."""
    v = [int(x) for x in a]
    bg = np.random.PCG64()
    bg.state = {
        "bit_generator": "PCG64",
        "state": {"state": (v[0] << 64) | v[1], "inc": (v[2] << 64) | v[3]},
        "has_uint32": v[4],
        "uinteger": v[5],
    }
    return np.random.Generator(bg)
