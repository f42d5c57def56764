"""SAC-GRU networks: a recurrent tanh-Gaussian actor and twin recurrent critics.

Actor:   s (17) -> Linear 128 + act -> GRU(128, 128) -> Linear 64 + act -> mu (4), log sigma (4) in [-20, 2].
Critics: concat(s, a) (21) -> Linear 128 + act -> GRU(128, 128) -> Linear 64 + act -> Q.

The two critics are one module with stacked (leading dimension 2) parameters, so one optimiser, one clip and
one Polyak op cover both, and every pass runs both critics on the same inputs. (A block-diagonal GRU of width
256 would be one kernel for both, but on CPU the time is matmul FLOPs, and it doubles them.) A single GRU
step for many (s, a, h) triples at once (`step`) evaluates Q for
actions other than the stored ones (the policy's, the next policy's) without another pass over the window.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from sacbot.agent.sizes import NetworkSizes

__all__ = ["Actor", "NetworkSizes", "TwinCritic", "activation_fn", "squashed_sample"]

LOG_2 = math.log(2.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def activation_fn(name: str) -> Callable[[Tensor], Tensor]:
    if name == "relu":
        return F.relu
    if name == "tanh":
        return torch.tanh
    if name == "elu":
        return F.elu
    raise ValueError(f"unknown activation {name!r} (relu, tanh, elu)")


def _run_gru(
    x: Tensor, h0: Tensor, weights: tuple[Tensor, Tensor, Tensor, Tensor], memoryless: bool
) -> Tensor:
    """Run a one-layer batch-first GRU over x (B, T, I) from h0 (B, H); returns outputs (B, T, H)."""
    if memoryless:
        b, t, i = x.shape
        zeros = torch.zeros(1, b * t, h0.shape[-1], dtype=x.dtype, device=x.device)
        out, _ = torch._VF.gru(x.reshape(b * t, 1, i), zeros, weights, True, 1, 0.0, False, False, True)
        return out.reshape(b, t, -1)
    out, _ = torch._VF.gru(x, h0.unsqueeze(0), weights, True, 1, 0.0, False, False, True)
    return out


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
        self.fc_in = nn.Linear(sizes.state_dim, sizes.embed)
        self.gru = nn.GRU(sizes.embed, sizes.hidden, batch_first=True)
        self.fc_head = nn.Linear(sizes.hidden, sizes.head)
        self.mu = nn.Linear(sizes.head, sizes.action_dim)
        self.log_std = nn.Linear(sizes.head, sizes.action_dim)
        self._act = activation_fn(sizes.activation)

    def initial_hidden(self, batch: int = 1) -> Tensor:
        return torch.zeros(batch, self.sizes.hidden, device=self.fc_in.weight.device)

    def _gru_weights(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        g = self.gru
        return (g.weight_ih_l0, g.weight_hh_l0, g.bias_ih_l0, g.bias_hh_l0)  # type: ignore[return-value]

    def forward(self, obs: Tensor, h0: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """obs (B, T, S), h0 (B, H) -> mu (B, T, A), log_std (B, T, A), GRU outputs (B, T, H)."""
        e = self._act(self.fc_in(obs))
        out = _run_gru(e, h0, self._gru_weights(), self.sizes.memoryless)
        y = self._act(self.fc_head(out))
        log_std = self.log_std(y).clamp(self.sizes.log_std_min, self.sizes.log_std_max)
        return self.mu(y), log_std, out

    def last_hidden(self, obs: Tensor, h0: Tensor) -> Tensor:
        """Hidden state after running obs (B, T, S) from h0; no heads (burn-in)."""
        e = self._act(self.fc_in(obs))
        out = _run_gru(e, h0, self._gru_weights(), self.sizes.memoryless)
        return out[:, -1]


class TwinCritic(nn.Module):
    """Two critics Q1, Q2 with stacked parameters, evaluated together."""

    def __init__(self, sizes: NetworkSizes) -> None:
        super().__init__()
        self.sizes = sizes
        d_in = sizes.state_dim + sizes.action_dim
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

    def weights(self, detach: bool = False) -> list[tuple[Tensor, ...]]:
        """Per critic: (W_in, b_in, W_ih, W_hh, b_ih, b_hh, W_head, b_head, W_q, b_q), views of the stacks."""
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
        if detach:
            ps = tuple(p.detach() for p in ps)
        return [tuple(p[c] for p in ps) for c in (0, 1)]

    def _embed(self, x: Tensor, w: tuple[Tensor, ...]) -> Tensor:
        return self._act(F.linear(x, w[0], w[1]))

    def _q(self, hidden: Tensor, w: tuple[Tensor, ...]) -> Tensor:
        return F.linear(self._act(F.linear(hidden, w[6], w[7])), w[8], w[9]).squeeze(-1)

    def sequence(
        self, x: Tensor, h0: tuple[Tensor, Tensor], ws: list[tuple[Tensor, ...]] | None = None
    ) -> tuple[Tensor, list[Tensor]]:
        """x = concat(s, a) (B, T, D); h0 per critic (B, H) -> Q (2, B, T), GRU outputs per critic (B, T, H)

        (as a list of two)."""
        ws = ws if ws is not None else self.weights()
        outs = self.hidden_after(x, h0, ws)
        return torch.stack([self._q(o, w) for o, w in zip(outs, ws, strict=True)]), outs

    def hidden_after(
        self, x: Tensor, h0: tuple[Tensor, Tensor], ws: list[tuple[Tensor, ...]] | None = None
    ) -> list[Tensor]:
        """GRU outputs per critic (B, T, H) only (burn-in, the targets' history)."""
        ws = ws if ws is not None else self.weights()
        return [
            _run_gru(self._embed(x, w), h, (w[2], w[3], w[4], w[5]), self.sizes.memoryless)
            for w, h in zip(ws, h0, strict=True)
        ]

    def step(
        self,
        x: Tensor,
        h_prev: tuple[Tensor, Tensor],
        ws: list[tuple[Tensor, ...]] | None = None,
        detach: bool = False,
    ) -> Tensor:
        """One GRU step for every (x, h_prev) pair: x (..., D), h_prev per critic (..., H) -> Q (2, ...).

        detach=True evaluates with detached weights (the actor's loss must not train the critics).
        """
        if ws is None:
            ws = self.weights(detach)
        elif detach:
            ws = [tuple(t.detach() for t in w) for w in ws]
        lead = x.shape[:-1]
        flat = x.reshape(-1, x.shape[-1])
        qs = []
        for w, h in zip(ws, h_prev, strict=True):
            h = h.reshape(-1, h.shape[-1])
            if self.sizes.memoryless:
                h = torch.zeros_like(h)
            h_new = torch.gru_cell(self._embed(flat, w), h, w[2], w[3], w[4], w[5])
            qs.append(self._q(h_new, w).reshape(lead))
        return torch.stack(qs)

    def initial_hidden(self, batch: int) -> tuple[Tensor, Tensor]:
        z = torch.zeros(batch, self.sizes.hidden, device=self.fc_in_weight.device)
        return (z, z)
