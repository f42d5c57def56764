"""The per-tick actor step without torch or autograd: state + hidden -> action + new hidden.

Built from `actor_arrays()` (or a published `ActorSnapshot.arrays`), equal to the torch actor within 1e-5.
A single step is one call into a small C kernel (`sacbot.agent.native_step`, compiled on first use) where a C
compiler exists, else about twenty small numpy calls on preallocated buffers; `native` says which. Only the
returned action and hidden state are fresh arrays, so the caller may keep them. Deterministic mode is
tanh(mu); stochastic mode draws tanh(mu + sigma * eps) from the actor's own seeded generator, for every entry
of the action or only those a `drawn` mask names (the others are tanh(mu)). A frozen actor's `ActionMode`
says which: see `drawn_entries`.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal, get_args

import numpy as np

from sacbot.agent import native_step
from sacbot.agent.features import (
    FLOAT_MATH,
    angle_inputs_of,
    energy_inputs_of,
    lead_inputs_of,
    network_inputs,
)
from sacbot.agent.sizes import NetworkSizes

ActionMode = Literal["mean", "sampled", "speed"]
"""How a frozen actor acts (`sacbot eval --actions`, SACBOT_EVAL_ACTIONS, an exported bot): "mean" plays
tanh(mu), deterministic; "sampled" draws every entry from the policy, as training play does; "speed" draws the
target speed from the policy and plays the mean's turn, gun turn and fire (a speed that aiming bots cannot
predict, the mean's aim)."""
ACTION_MODES: tuple[ActionMode, ...] = get_args(ActionMode)
SPEED_ENTRY = 1  # the action entry `features.action_to_intent` maps to the target speed


def as_action_mode(value: object) -> ActionMode | None:
    """`value` as an ActionMode, None when it names none."""
    return next((mode for mode in ACTION_MODES if mode == value), None)


def drawn_entries(mode: ActionMode, action_dim: int) -> tuple[bool, np.ndarray | None]:
    """`(deterministic, drawn)` for `FastActor.step` in `mode`: drawn is the 0/1 mask of the entries drawn
    from the policy (None: every entry)."""
    if mode == "mean":
        return True, None
    if mode == "sampled":
        return False, None
    mask = np.zeros(action_dim, np.float32)
    mask[SPEED_ENTRY] = 1.0
    return False, mask


def behaviour_sizes(sizes: NetworkSizes, log_std_min: float | None) -> NetworkSizes:
    """The sizes a behaviour actor draws with: every entry's log std at least `log_std_min` (None: the
    policy's own spread). Above the policy's bound every entry draws with exactly that log std, a spread
    the policy itself may not reach, so the critics see actions around its mean. The trained actor is
    unchanged."""
    if log_std_min is None:
        return sizes
    return replace(
        sizes,
        log_std_min=max(sizes.log_std_min, log_std_min),
        log_std_max=max(sizes.log_std_max, log_std_min),
    )


def _act_inplace(x: np.ndarray, name: str) -> None:
    if name == "relu":
        np.maximum(x, 0.0, out=x)
    elif name == "tanh":
        np.tanh(x, out=x)
    elif name == "elu":
        np.copyto(x, np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))))
    else:
        raise ValueError(f"unknown activation {name!r}")


class FastActor:
    """One actor's weights and scratch buffers. Not shared between threads: each thread that steps an actor
    builds its own (the buffers are reused by every step, and the kernel runs without the GIL)."""

    def __init__(
        self,
        arrays: Mapping[str, np.ndarray],
        sizes: NetworkSizes | None = None,
        seed: int | None = None,
        native: bool = True,
    ) -> None:
        self.sizes = sz = sizes or NetworkSizes()

        def get(name: str) -> np.ndarray:
            return np.ascontiguousarray(arrays[f"actor.{name}"], dtype=np.float32)

        self.w_in, self.b_in = get("fc_in.weight"), get("fc_in.bias")
        self.w_ih, self.b_ih = get("gru.weight_ih_l0"), get("gru.bias_ih_l0")
        self.w_hh, self.b_hh = get("gru.weight_hh_l0"), get("gru.bias_hh_l0")
        self.w_head, self.b_head = get("fc_head.weight"), get("fc_head.bias")
        self.w_out = np.ascontiguousarray(np.concatenate([get("mu.weight"), get("log_std.weight")]))
        self.b_out = np.concatenate([get("mu.bias"), get("log_std.bias")])
        h, a = self.w_hh.shape[1], self.w_out.shape[0] // 2
        if self.w_in.shape[1] != sz.input_dim or h != sz.hidden or a != sz.action_dim:
            raise ValueError("actor arrays do not match the network sizes")
        self.hidden_dim, self.action_dim = h, a
        self.rng = np.random.default_rng(seed)
        f32 = np.float32
        self._e = np.empty(self.w_in.shape[0], f32)
        self._gi = np.empty(3 * h, f32)
        self._gh = np.empty(3 * h, f32)
        self._rz = np.empty(2 * h, f32)
        self._n = np.empty(h, f32)
        self._y = np.empty(self.w_head.shape[0], f32)
        self._out = np.empty(2 * a, f32)
        self._zero_h = np.zeros(h, f32)
        self._inputs = np.empty(sz.input_dim, f32)
        self._widened = sz.input_dim > sz.observed_dim
        self._native: Any = None  # the C kernel's function, when bound
        self._native_ptrs: tuple[int, ...] = ()
        if native:
            self._bind_native()

    @property
    def native(self) -> bool:
        """Whether single steps run in the compiled kernel."""
        return self._native is not None

    def _shapes_consistent(self) -> bool:
        """Every array the kernel reads has the shape the sizes imply (it trusts them; numpy would raise)."""
        e, f, h, a, s = (
            self.w_in.shape[0],
            self.w_head.shape[0],
            self.hidden_dim,
            self.action_dim,
            self.sizes.input_dim,
        )
        expected = {
            "w_in": (e, s), "b_in": (e,), "w_ih": (3 * h, e), "b_ih": (3 * h,), "w_hh": (3 * h, h),
            "b_hh": (3 * h,), "w_head": (f, h), "b_head": (f,), "w_out": (2 * a, f), "b_out": (2 * a,),
        }  # fmt: skip
        return all(getattr(self, name).shape == shape for name, shape in expected.items())

    def _bind_native(self) -> None:
        sz = self.sizes
        if (
            not self._shapes_consistent()
            or sz.activation not in native_step.ACTIVATIONS
            or (
                self.w_in.shape[0] > native_step.MAX_EMBED
                or self.hidden_dim > native_step.MAX_HIDDEN
                or self.w_head.shape[0] > native_step.MAX_HEAD
                or self.action_dim > native_step.MAX_ACTION
            )
        ):
            return
        lib = native_step.load_kernel()
        if lib is None:
            return
        f32 = np.float32
        self._io = {
            "state": np.zeros(sz.input_dim, f32),
            "hidden": np.zeros(self.hidden_dim, f32),
            "eps": np.zeros(self.action_dim, f32),
            "action": np.zeros(self.action_dim, f32),
            "new_hidden": np.zeros(self.hidden_dim, f32),
        }
        weights = [self.w_in, self.b_in, self.w_ih, self.b_ih, self.w_hh, self.b_hh]
        weights += [self.w_head, self.b_head, self.w_out, self.b_out]
        # The struct holds raw pointers into these arrays: they live as long as this actor.
        self._struct = native_step.ActorStruct(
            *(w.ctypes.data for w in weights),
            sz.input_dim,
            self.w_in.shape[0],
            self.hidden_dim,
            self.w_head.shape[0],
            self.action_dim,
            native_step.ACTIVATIONS[sz.activation],
            int(sz.memoryless),
            sz.log_std_min,
            sz.log_std_max,
        )
        io = self._io
        self._native_ptrs = (
            ctypes.addressof(self._struct),
            io["state"].ctypes.data,
            io["hidden"].ctypes.data,
            io["eps"].ctypes.data,
            io["action"].ctypes.data,
            io["new_hidden"].ctypes.data,
        )
        self._native = lib.actor_step

    def _step_native(
        self,
        state: np.ndarray,
        hidden: np.ndarray,
        deterministic: bool,
        drawn: np.ndarray | None,
        eps: np.ndarray | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        ctx, p_state, p_hidden, p_eps, p_action, p_new = self._native_ptrs
        io = self._io
        np.copyto(io["state"], state, casting="same_kind")
        np.copyto(io["hidden"], hidden, casting="same_kind")
        if deterministic:
            self._native(ctx, p_state, p_hidden, None, p_action, p_new)
        else:
            io["eps"][:] = self.rng.standard_normal(self.action_dim, dtype=np.float32) if eps is None else eps
            if drawn is not None:
                io["eps"] *= drawn
            self._native(ctx, p_state, p_hidden, p_eps, p_action, p_new)
        return io["action"].copy(), io["new_hidden"].copy()

    def _widen(self, state: np.ndarray) -> np.ndarray:
        """One state and its angle, energy and lead inputs (`features.input_columns`) in a reused buffer:
        plain-float maths, a few microseconds (numpy's per-call overhead on 10 scalars costs the realtime
        thread several times more)."""
        v = state.tolist()
        buf = self._inputs
        sz = self.sizes
        buf[: sz.observed_dim] = state
        columns = angle_inputs_of(v[2], v[4], v[13], v[14], math.sin, math.cos) if sz.angle_inputs else []
        if sz.energy_inputs:
            columns += energy_inputs_of(v[16], math.sin, math.cos)
        if sz.lead_inputs:
            columns += lead_inputs_of(FLOAT_MATH, v[0], v[1], v[2], v[4], v[7], v[12], v[13], v[14], v[15])
        buf[sz.observed_dim :] = columns
        return buf

    def initial_hidden(self) -> np.ndarray:
        return np.zeros(self.hidden_dim, np.float32)

    def step(
        self,
        state: np.ndarray,
        hidden: np.ndarray,
        deterministic: bool = True,
        drawn: np.ndarray | None = None,
        eps: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """One tick at batch 1: state (S,), hidden (H,) -> action (A,) in [-1, 1], new hidden (H,).
        Stochastic steps draw the entries `drawn` names (None: all); the others are the mean's. Their
        standard normal draws come from `eps` (A,) when given (coloured noise), else from this actor's
        generator."""
        if self._widened:
            state = self._widen(state)
        if self._native is not None:
            return self._step_native(state, hidden, deterministic, drawn, eps)
        sz, h = self.sizes, self.hidden_dim
        if state.dtype != np.float32:
            state = state.astype(np.float32)
        if hidden.dtype != np.float32:
            hidden = hidden.astype(np.float32)
        if sz.memoryless:
            hidden = self._zero_h
        e, gi, gh, rz, n, y, out = self._e, self._gi, self._gh, self._rz, self._n, self._y, self._out
        np.dot(self.w_in, state, out=e)
        e += self.b_in
        _act_inplace(e, sz.activation)
        np.dot(self.w_ih, e, out=gi)
        gi += self.b_ih
        np.dot(self.w_hh, hidden, out=gh)
        gh += self.b_hh
        # r, z = sigmoid(gi + gh) on the first 2H; n = tanh(gi_n + r * gh_n); h' = n + z * (h - n)
        np.add(gi[: 2 * h], gh[: 2 * h], out=rz)
        np.negative(rz, out=rz)
        np.exp(rz, out=rz)
        rz += 1.0
        np.reciprocal(rz, out=rz)
        np.multiply(rz[:h], gh[2 * h :], out=n)
        n += gi[2 * h :]
        np.tanh(n, out=n)
        new_h = np.subtract(hidden, n)
        new_h *= rz[h:]
        new_h += n
        np.dot(self.w_head, new_h, out=y)
        y += self.b_head
        _act_inplace(y, sz.activation)
        np.dot(self.w_out, y, out=out)
        out += self.b_out
        a = self.action_dim
        if deterministic:
            action = np.tanh(out[:a])
        else:
            log_std = np.clip(out[a:], sz.log_std_min, sz.log_std_max)
            action = self.rng.standard_normal(a, dtype=np.float32) if eps is None else eps.astype(np.float32)
            if drawn is not None:
                action *= drawn
            action *= np.exp(log_std)
            action += out[:a]
            np.tanh(action, out=action)
        return action, new_h

    def step_batch(
        self,
        states: np.ndarray,
        hidden: np.ndarray,
        deterministic: bool = True,
        eps: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Many independent ticks at once: states (N, S), hidden (N, H) -> actions (N, A), hidden (N, H).
        Stochastic steps take their standard normal draws from `eps` (N, A) when given (coloured noise,
        `sacbot.agent.exploration`), else from this actor's generator."""
        sz, h, a = self.sizes, self.hidden_dim, self.action_dim
        states = network_inputs(states, sz)
        if sz.memoryless:
            hidden = np.zeros_like(hidden)
        e = states @ self.w_in.T + self.b_in
        _act_inplace(e, sz.activation)
        gi = e @ self.w_ih.T + self.b_ih
        gh = hidden @ self.w_hh.T + self.b_hh
        rz = 1.0 / (1.0 + np.exp(-(gi[:, : 2 * h] + gh[:, : 2 * h])))
        n = np.tanh(gi[:, 2 * h :] + rz[:, :h] * gh[:, 2 * h :])
        new_h = (n + rz[:, h:] * (hidden - n)).astype(np.float32)
        y = new_h @ self.w_head.T + self.b_head
        _act_inplace(y, sz.activation)
        out = y @ self.w_out.T + self.b_out
        mu = out[:, :a]
        if deterministic:
            return np.tanh(mu).astype(np.float32), new_h
        log_std = np.clip(out[:, a:], sz.log_std_min, sz.log_std_max)
        if eps is None:
            eps = self.rng.standard_normal(mu.shape, dtype=np.float32)
        return np.tanh(mu + np.exp(log_std) * eps).astype(np.float32), new_h
