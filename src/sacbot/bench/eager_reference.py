"""A straightforward eager SAC-GRU update of the same sizes: the yardstick that
`sacbot bench trainer --compare-eager` measures our trainer against, side by side in one process.

What "straightforward" means here: torch.nn modules (nn.GRU), each critic and each target its own module and
its own pass over the window, a separate actor pass for the next states, the actor loss through full critic
passes with the policy's actions, and one backward and optimiser step per loss (critics first, then actor,
then alpha). Same batch, same window (burn-in without gradient), same sizes, SAC losses of the same form;
not the same numbers as `SacTrainer` (its targets and actor-loss Q take one step from the stored-action
history, where full passes here feed the policy's actions into the recurrence; ReLU only). It is a speed
yardstick and not used for training.
"""

from __future__ import annotations

import copy
import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from sacbot.agent.networks import squashed_sample
from sacbot.agent.replay import Batch
from sacbot.agent.sizes import NetworkSizes


class _Recurrent(nn.Module):
    def __init__(self, d_in: int, d_out: int, sizes: NetworkSizes) -> None:
        super().__init__()
        self.fc_in = nn.Linear(d_in, sizes.embed)
        self.gru = nn.GRU(sizes.embed, sizes.hidden, batch_first=True)
        self.fc_head = nn.Linear(sizes.hidden, sizes.head)
        self.out = nn.Linear(sizes.head, d_out)

    def forward(self, x: Tensor, h0: Tensor) -> tuple[Tensor, Tensor]:
        seq, h = self.gru(F.relu(self.fc_in(x)), h0.unsqueeze(0))
        return self.out(F.relu(self.fc_head(seq))), h[0]

    def burn(self, x: Tensor, h0: Tensor) -> Tensor:
        with torch.no_grad():
            return self.gru(F.relu(self.fc_in(x)), h0.unsqueeze(0))[1][0]


class EagerSac:
    """One eager update per `update(batch)`; batch layout as `SequenceReplay.sample` gives it."""

    def __init__(self, sizes: NetworkSizes | None = None, burn_in: int = 8, seed: int = 0) -> None:
        self.sizes = sz = sizes or NetworkSizes()
        self.burn_in = burn_in
        torch.manual_seed(seed)
        self.actor = _Recurrent(sz.state_dim, 2 * sz.action_dim, sz)
        self.critics = [_Recurrent(sz.state_dim + sz.action_dim, 1, sz) for _ in range(2)]
        self.targets = [copy.deepcopy(c).requires_grad_(False) for c in self.critics]
        self.log_alpha = torch.tensor(math.log(0.2), requires_grad=True)
        critic_params = [p for c in self.critics for p in c.parameters()]
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic_opt = torch.optim.Adam(critic_params, lr=3e-4)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=3e-4)
        self.critic_params = critic_params

    def _policy(self, obs: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        out, _ = self.actor(obs, h)
        a = self.sizes.action_dim
        mu, log_std = out[..., :a], out[..., a:].clamp(self.sizes.log_std_min, self.sizes.log_std_max)
        return squashed_sample(mu, log_std, torch.randn_like(mu))

    def update(self, batch: Batch, gamma: float = 0.99, tau: float = 0.005) -> float:
        obs, act = torch.as_tensor(batch.obs), torch.as_tensor(batch.action)
        rew, done, h0 = (
            torch.as_tensor(batch.reward),
            torch.as_tensor(batch.done),
            torch.as_tensor(batch.hidden),
        )
        b, length = self.burn_in, act.shape[1]
        zeros = torch.zeros(obs.shape[0], self.sizes.hidden)
        alpha = self.log_alpha.detach().exp()
        h_actor = self.actor.burn(obs[:, :b], h0)
        # critics: own pass each over the window with the stored actions
        x = torch.cat([obs[:, :length], act], -1)
        qs = [c(x[:, b:], c.burn(x[:, :b], zeros))[0].squeeze(-1) for c in self.critics]
        with torch.no_grad():
            h_next = self.actor.burn(obs[:, : b + 1], h0)
            a_next, logp_next = self._policy(obs[:, b + 1 :], h_next)
            x_next = torch.cat([obs[:, b + 1 :], a_next], -1)
            q_next = torch.min(
                *[t(x_next, t.burn(x[:, : b + 1], zeros))[0].squeeze(-1) for t in self.targets]
            )
            y = rew[:, b:] + gamma * (1.0 - done[:, b:]) * (q_next - alpha * logp_next)
        critic_loss = sum(F.mse_loss(q, y) for q in qs)
        self.critic_opt.zero_grad()
        critic_loss.backward()  # type: ignore[union-attr]
        nn.utils.clip_grad_norm_(self.critic_params, 1.0)
        self.critic_opt.step()
        # actor: full critic passes with the policy's actions
        a_pi, logp = self._policy(obs[:, b:length], h_actor)
        x_pi = torch.cat([obs[:, b:length], a_pi], -1)
        q_pi = torch.min(*[c(x_pi, c.burn(x[:, :b], zeros))[0].squeeze(-1) for c in self.critics])
        actor_loss = (alpha * logp - q_pi).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        nn.utils.clip_grad_norm_(self.actor.parameters(), 1.0)
        self.actor_opt.step()
        alpha_loss = -(self.log_alpha * (logp.detach() - self.sizes.action_dim)).mean()
        self.alpha_opt.zero_grad()
        alpha_loss.backward()
        self.alpha_opt.step()
        with torch.no_grad():
            for t, c in zip(self.targets, self.critics, strict=True):
                for pt, pc in zip(t.parameters(), c.parameters(), strict=True):
                    pt.lerp_(pc, tau)
        return float(critic_loss.detach())  # type: ignore[union-attr]
