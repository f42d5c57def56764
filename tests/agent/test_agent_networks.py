"""Networks: shapes, the tanh-Gaussian log-probability, the twin critic against two plain torch critics."""

from __future__ import annotations

import math
from typing import cast

import torch
from torch import nn
from torch.nn import functional as F

from sacbot.agent.networks import Actor, NetworkSizes, TwinCritic, squashed_sample


def test_shapes() -> None:
    torch.manual_seed(0)
    sz = NetworkSizes()
    actor, critic = Actor(sz), TwinCritic(sz)
    obs = torch.randn(5, 7, 17)
    with torch.no_grad():
        mu, log_std, out = actor(obs, actor.initial_hidden(5))
    assert mu.shape == (5, 7, 4) and log_std.shape == (5, 7, 4) and out.shape == (5, 7, 128)
    assert float(log_std.min()) >= -20.0 and float(log_std.max()) <= 2.0
    x = torch.cat([obs, torch.rand(5, 7, 4)], -1)
    q, hs, gh = critic.sequence_tm(x.transpose(0, 1), critic.initial_hidden(5))  # time-major, as trained
    assert q.shape == (2, 7, 5) and hs.shape == (2, 7, 5, 128) and gh.shape == (2, 7, 5, 3 * 128)
    assert critic.step(x, hs.transpose(1, 2)).shape == (2, 5, 7)
    a, logp = squashed_sample(mu, log_std, torch.randn_like(mu))
    assert a.shape == (5, 7, 4) and logp.shape == (5, 7) and float(a.abs().max()) < 1.0


def test_log_prob_matches_monte_carlo_density() -> None:
    """The squashed density integrates what it says: compare log pi(a) to a histogram estimate in 1-D."""
    gen = torch.Generator().manual_seed(0)
    mu, log_std = torch.tensor([[0.4]]), torch.tensor([[math.log(0.8)]])
    n = 400_000
    noise = torch.randn(n, 1, generator=gen)
    a, logp = squashed_sample(mu.expand(n, 1), log_std.expand(n, 1), noise)
    edges = torch.linspace(-0.9, 0.9, 19)
    counts = torch.histc(a[:, 0], bins=18, min=-0.9, max=0.9)
    width = float(edges[1] - edges[0])
    centers = (edges[:-1] + edges[1:]) / 2
    empirical = counts / (n * width)
    # analytic density at the bin centres
    u = torch.atanh(centers)
    analytic = torch.exp(
        -0.5 * ((u - 0.4) / 0.8) ** 2
        - math.log(0.8)
        - 0.5 * math.log(2 * math.pi)
        - torch.log(1 - centers**2)
    )
    assert torch.allclose(empirical, analytic, rtol=0.05, atol=0.01)
    # and the returned log-prob equals the analytic one at the sampled points
    a1 = a[:1000, 0]
    u1 = torch.atanh(a1.double())
    expected = (
        -0.5 * ((u1 - 0.4) / 0.8) ** 2
        - math.log(0.8)
        - 0.5 * math.log(2 * math.pi)
        - torch.log(1 - torch.tanh(u1) ** 2)
    )
    assert torch.allclose(logp[:1000].double(), expected, atol=1e-3)
    # Monte Carlo entropy estimate -E[log pi] of the 4-D default head is finite and below the Gaussian's
    mu4, ls4 = torch.zeros(n, 4), torch.zeros(n, 4)
    _, lp4 = squashed_sample(mu4, ls4, torch.randn(n, 4, generator=gen))
    gaussian_entropy = 4 * 0.5 * math.log(2 * math.pi * math.e)
    assert -float(lp4.mean()) < gaussian_entropy


def test_twin_critic_equals_two_plain_critics() -> None:
    torch.manual_seed(3)
    sz = NetworkSizes(embed=16, hidden=16, head=8)
    twin = TwinCritic(sz)
    x = torch.randn(3, 5, 21)
    q_tm, hs_tm, _ = twin.sequence_tm(x.transpose(0, 1), twin.initial_hidden(3))
    q, hs = q_tm.transpose(1, 2), hs_tm.transpose(1, 2)  # batch-first, as nn.GRU(batch_first=True) gives
    for c in range(2):
        fc = nn.Linear(21, 16)
        gru = nn.GRU(16, 16, batch_first=True)
        head, qh = nn.Linear(16, 8), nn.Linear(8, 1)
        with torch.no_grad():
            fc.weight.copy_(twin.fc_in_weight[c])
            fc.bias.copy_(twin.fc_in_bias[c])
            cast(torch.Tensor, gru.weight_ih_l0).copy_(twin.gru_weight_ih[c])
            cast(torch.Tensor, gru.weight_hh_l0).copy_(twin.gru_weight_hh[c])
            cast(torch.Tensor, gru.bias_ih_l0).copy_(twin.gru_bias_ih[c])
            cast(torch.Tensor, gru.bias_hh_l0).copy_(twin.gru_bias_hh[c])
            head.weight.copy_(twin.head_weight[c])
            head.bias.copy_(twin.head_bias[c])
            qh.weight.copy_(twin.q_weight[c])
            qh.bias.copy_(twin.q_bias[c])
            out, _ = gru(F.relu(fc(x)))
            expect = qh(F.relu(head(out))).squeeze(-1)
        assert torch.allclose(q[c], expect, atol=1e-6)
        assert torch.allclose(hs[c], out, atol=1e-6)
    # one step from h_{t-1} with the stored input reproduces the sequence's Q at t
    h_prev = torch.cat([torch.zeros(2, 3, 1, 16), hs[:, :, :-1]], 2)
    assert torch.allclose(twin.step(x, h_prev), q, atol=1e-5)


def test_memoryless_control_ignores_history() -> None:
    torch.manual_seed(0)
    actor = Actor(NetworkSizes(memoryless=True))
    obs = torch.randn(2, 6, 17)
    obs[1, :3] = torch.randn(3, 17)  # different history, same last three states
    obs[1, 3:] = obs[0, 3:]
    mu, _, _ = actor(obs, torch.randn(2, 128))
    assert torch.allclose(mu[0, 3:], mu[1, 3:], atol=1e-6)
