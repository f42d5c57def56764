"""SAC-GRU networks: a recurrent tanh-Gaussian actor and twin recurrent critics.

Actor:   s (17) -> Linear 128 + act -> GRU(128, 128) -> Linear 64 + act -> mu (4), log sigma (4) in [-20, 2].
Critics: concat(s, a) (21) -> Linear 128 + act -> GRU(128, 128) -> Linear 64 + act -> Q.
With the opt-in angle, energy and lead inputs (`NetworkSizes.angle_inputs`, `.energy_inputs`,
`.lead_inputs`) s is the state widened by the trainer (8, 2 and 4 more; `features.input_columns`).
With the opt-in bullet inputs (`NetworkSizes.bullet_inputs`) the critics alone read 18 more
(`sacbot.agent.features.bullet_inputs`).

The two critics are one module with stacked (leading dimension 2) parameters, so one optimiser, one clip and
one Polyak op cover both, and every pass runs both critics at once: batched matmuls and one grouped GRU
through the seam `sacbot.agent.accel` (its C loops or hand-written backward where they apply, else torch's
GRU). A single GRU step for many (s, a, h) triples at once (`step`) evaluates Q for actions other than the
stored ones (the policy's, the next policy's) without another pass over the window. The trainer works
time-major (T, B, ...); `forward`/`sequence` are batch-first wrappers.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from sacbot.agent import accel
from sacbot.agent.activations import activation_fn
from sacbot.agent.sizes import NetworkSizes

__all__ = ["Actor", "NetworkSizes", "TwinCritic", "activation_fn", "squashed_sample"]

LOG_2 = math.log(2.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _run_gru(
    x: Tensor, h0: Tensor, weights: tuple[Tensor, Tensor, Tensor, Tensor], memoryless: bool
) -> tuple[Tensor, Tensor]:
    """G grouped GRUs over time-major x (G, T, B, I) from h0 (G, B, H) -> outputs (G, T, B, H) and the
    detached hidden-side pre-activations W_hh h_{t-1} + b_hh (G, T, B, 3H).

    The memoryless control runs every step from a zero state (one step over T * B rows)."""
    if memoryless:
        g, t, b, i = x.shape
        zeros = h0.new_zeros(g, t * b, h0.shape[-1])
        out, gh = accel.gru_sequence_with_gates(x.reshape(g, 1, t * b, i), zeros, *weights)
        return out.reshape(g, t, b, -1), gh.reshape(g, t, b, -1)
    return accel.gru_sequence_with_gates(x, h0, *weights)


def _run_gru_outputs(
    x: Tensor, h0: Tensor, weights: tuple[Tensor, Tensor, Tensor, Tensor], memoryless: bool
) -> Tensor:
    """`_run_gru`'s outputs only (nothing kept for a gate reuse)."""
    if memoryless:
        return _run_gru(x, h0, weights, memoryless)[0]
    return accel.gru_sequence(x, h0, *weights)


def _stack(modules: list[nn.GRU], name: str) -> Tensor:
    return torch.stack([getattr(m, name).detach() for m in modules])


def squashed_sample(mu: Tensor, log_std: Tensor, noise: Tensor) -> tuple[Tensor, Tensor]:
    """Reparameterised tanh-Gaussian sample a = tanh(mu + sigma * noise) and its log-density (summed).

    log pi(a) = log N(u; mu, sigma) - sum log(1 - tanh(u)^2), with the stable form
    log(1 - tanh(u)^2) = 2 * (log 2 - u - softplus(-2u)).
    """
    u = mu + log_std.exp() * noise
    action = torch.tanh(u)
    log_normal = (-0.5 * noise.pow(2) - log_std - HALF_LOG_2PI).sum(-1)
    correction = (2.0 * (LOG_2 - u - F.softplus(-2.0 * u))).sum(-1)
    return action, log_normal - correction


class Actor(nn.Module):
    """pi(a | s, h): recurrent tanh-Gaussian policy."""

    def __init__(self, sizes: NetworkSizes) -> None:
        super().__init__()
        self.sizes = sizes
        self.fc_in = nn.Linear(sizes.input_dim, sizes.embed)
        self.gru = nn.GRU(sizes.embed, sizes.hidden, batch_first=True)
        self.fc_head = nn.Linear(sizes.hidden, sizes.head)
        self.mu = nn.Linear(sizes.head, sizes.action_dim)
        self.log_std = nn.Linear(sizes.head, sizes.action_dim)
        self._act = activation_fn(sizes.activation)

    def initial_hidden(self, batch: int = 1) -> Tensor:
        return torch.zeros(batch, self.sizes.hidden, device=self.fc_in.weight.device)

    def _gru_weights(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        g = self.gru  # as a group of one
        w_ih, w_hh, b_ih, b_hh = (
            torch.as_tensor(g.weight_ih_l0),
            torch.as_tensor(g.weight_hh_l0),
            torch.as_tensor(g.bias_ih_l0),
            torch.as_tensor(g.bias_hh_l0),
        )
        return (w_ih.unsqueeze(0), w_hh.unsqueeze(0), b_ih.unsqueeze(0), b_hh.unsqueeze(0))

    def _gru_tm(self, obs: Tensor, h0: Tensor) -> Tensor:
        e = self._act(self.fc_in(obs)).unsqueeze(0)
        return _run_gru_outputs(e, h0.unsqueeze(0), self._gru_weights(), self.sizes.memoryless)[0]

    def heads(self, out: Tensor) -> tuple[Tensor, Tensor]:
        """GRU outputs (..., H) -> mu, log_std (..., A)."""
        y = self._act(self.fc_head(out))
        log_std = self.log_std(y).clamp(self.sizes.log_std_min, self.sizes.log_std_max)
        return self.mu(y), log_std

    def sequence_tm(self, obs: Tensor, h0: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Time-major: obs (T, B, S), h0 (B, H) -> mu (T, B, A), log_std (T, B, A), GRU outputs (T, B, H)."""
        out = self._gru_tm(obs, h0)
        mu, log_std = self.heads(out)
        return mu, log_std, out

    def last_hidden_tm(self, obs: Tensor, h0: Tensor) -> Tensor:
        """Hidden state (B, H) after running time-major obs (T, B, S) from h0; no heads (burn-in)."""
        return self._gru_tm(obs, h0)[-1]

    def forward(self, obs: Tensor, h0: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Batch-first: obs (B, T, S), h0 (B, H) -> mu (B, T, A), log_std (B, T, A), GRU outputs (B, T, H)."""
        mu, log_std, out = self.sequence_tm(obs.transpose(0, 1), h0)
        return mu.transpose(0, 1), log_std.transpose(0, 1), out.transpose(0, 1)


class TwinCritic(nn.Module):
    """Two critics Q1, Q2 with stacked parameters, evaluated together."""

    def __init__(self, sizes: NetworkSizes) -> None:
        super().__init__()
        self.sizes = sizes
        d_in = sizes.input_dim + sizes.critic_only_dim + sizes.action_dim
        e, h, f = sizes.embed, sizes.hidden, sizes.head
        # Each critic initialised as its torch.nn counterpart would be, then stacked.
        fc_in = [nn.Linear(d_in, e) for _ in range(2)]
        grus = [nn.GRU(e, h, batch_first=True) for _ in range(2)]
        heads = [nn.Linear(h, f) for _ in range(2)]
        qs = [nn.Linear(f, 1) for _ in range(2)]
        self.fc_in_weight = nn.Parameter(torch.stack([m.weight.data for m in fc_in]))  # (2, E, D)
        self.fc_in_bias = nn.Parameter(torch.stack([m.bias.data for m in fc_in]))  # (2, E)
        self.gru_weight_ih = nn.Parameter(_stack(grus, "weight_ih_l0"))  # (2, 3H, E)
        self.gru_weight_hh = nn.Parameter(_stack(grus, "weight_hh_l0"))  # (2, 3H, H)
        self.gru_bias_ih = nn.Parameter(_stack(grus, "bias_ih_l0"))  # (2, 3H)
        self.gru_bias_hh = nn.Parameter(_stack(grus, "bias_hh_l0"))  # (2, 3H)
        self.head_weight = nn.Parameter(torch.stack([m.weight.data for m in heads]))  # (2, F, H)
        self.head_bias = nn.Parameter(torch.stack([m.bias.data for m in heads]))  # (2, F)
        self.q_weight = nn.Parameter(torch.stack([m.weight.data for m in qs]))  # (2, 1, F)
        self.q_bias = nn.Parameter(torch.stack([m.bias.data for m in qs]))  # (2, 1)
        self._act = activation_fn(sizes.activation)

    def weights(self, detach: bool = False) -> tuple[Tensor, ...]:
        """The stacked parameters (W_in, b_in, W_ih, W_hh, b_ih, b_hh, W_head, b_head, W_q, b_q), each
        (2, ...)."""
        ps: tuple[Tensor, ...] = (
            self.fc_in_weight,
            self.fc_in_bias,
            self.gru_weight_ih,
            self.gru_weight_hh,
            self.gru_bias_ih,
            self.gru_bias_hh,
            self.head_weight,
            self.head_bias,
            self.q_weight,
            self.q_bias,
        )
        return tuple(p.detach() for p in ps) if detach else ps

    def _embed(self, x: Tensor, w: tuple[Tensor, ...]) -> Tensor:
        """Shared input x (..., D) -> each critic's embedding (2, ..., E)."""
        flat = x.reshape(1, -1, x.shape[-1]).expand(2, -1, -1)
        e = self._act(torch.baddbmm(w[1].unsqueeze(1), flat, w[0].transpose(1, 2)))
        return e.view(2, *x.shape[:-1], -1)

    def _q(self, hidden: Tensor, w: tuple[Tensor, ...]) -> Tensor:
        """GRU outputs (2, ..., H) -> Q (2, ...)."""
        flat = hidden.reshape(2, -1, hidden.shape[-1])
        y = self._act(torch.baddbmm(w[7].unsqueeze(1), flat, w[6].transpose(1, 2)))
        q = torch.baddbmm(w[9].unsqueeze(1), y, w[8].transpose(1, 2))  # (2, N, 1)
        return q.view(hidden.shape[:-1])

    def hidden_tm(self, x: Tensor, h0: Tensor, ws: tuple[Tensor, ...] | None = None) -> Tensor:
        """Time-major x = concat(s, a) (T, B, D), h0 (2, B, H) -> GRU outputs (2, T, B, H)."""
        w = ws if ws is not None else self.weights()
        return _run_gru_outputs(self._embed(x, w), h0, (w[2], w[3], w[4], w[5]), self.sizes.memoryless)

    def sequence_tm(
        self, x: Tensor, h0: Tensor, ws: tuple[Tensor, ...] | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """Time-major x (T, B, D), h0 (2, B, H) -> Q (2, T, B), GRU outputs (2, T, B, H) and the detached
        hidden-side pre-activations W_hh h_{t-1} + b_hh (2, T, B, 3H) for `accel.actor_q`."""
        w = ws if ws is not None else self.weights()
        out, gh = _run_gru(self._embed(x, w), h0, (w[2], w[3], w[4], w[5]), self.sizes.memoryless)
        return self._q(out, w), out, gh

    def step(
        self, x: Tensor, h_prev: Tensor, ws: tuple[Tensor, ...] | None = None, detach: bool = False
    ) -> Tensor:
        """One GRU step for every (x, h_prev) pair: x (..., D), h_prev (2, ..., H) -> Q (2, ...).

        detach=True evaluates with detached weights (the actor's loss must not train the critics).
        """
        w = ws if ws is not None else self.weights()
        if detach:
            w = tuple(t.detach() for t in w)
        e = self._embed(x, w).reshape(2, 1, -1, self.sizes.embed)
        h = h_prev.reshape(2, -1, h_prev.shape[-1])
        if self.sizes.memoryless:
            h = torch.zeros_like(h)
        h_new = accel.gru_sequence(e, h, w[2], w[3], w[4], w[5])  # (2, 1, N, H)
        return self._q(h_new, w).reshape(2, *x.shape[:-1])

    def initial_hidden(self, batch: int) -> Tensor:
        return torch.zeros(2, batch, self.sizes.hidden, device=self.fc_in_weight.device)
