"""Trainer: burn-in has no gradient, Polyak, clipping, alpha, snapshots, checkpoint arrays, exact resume."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sacbot.agent import accel
from sacbot.agent.networks import NetworkSizes
from sacbot.agent.replay import Batch
from sacbot.agent.trainer import SacTrainer, clipping_divisors
from sacbot.agent.trainer_config import TrainerConfig, resolve_device
from sacbot.errors import UserError

SMALL = NetworkSizes(embed=16, hidden=16, head=8)


def config(**kw: object) -> TrainerConfig:
    base: dict[str, object] = dict(sizes=SMALL, batch_size=8, replay_capacity=2000, device="cpu", seed=7)
    base.update(kw)
    return TrainerConfig(**base)  # type: ignore[arg-type]


def fill(
    trainer: SacTrainer, rounds: int = 6, length: int = 40, seed: int = 0, reward_scale: float = 1.0
) -> None:
    sz = trainer.config.sizes
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        done = np.zeros(length, np.float32)
        done[-1] = 1
        trainer.replay.add_round(
            rng.uniform(-1, 1, (length + 1, sz.stored_dim)).astype(np.float32),
            rng.uniform(-1, 1, (length, sz.action_dim)).astype(np.float32),
            (reward_scale * rng.standard_normal(length)).astype(np.float32),
            done,
            np.tanh(rng.standard_normal((length, sz.hidden))).astype(np.float32),
        )


def test_burn_in_steps_carry_no_gradient() -> None:
    trainer = SacTrainer(config())
    fill(trainer)
    b = trainer.replay.sample(8, np.random.default_rng(0))

    def tm(a: np.ndarray) -> torch.Tensor:  # losses() takes time-major tensors
        return torch.tensor(a.swapaxes(0, 1).copy())

    obs, act = tm(b.obs).requires_grad_(), tm(b.action).requires_grad_()
    h0 = torch.tensor(b.hidden, requires_grad=True)
    loss = trainer.losses(obs, act, tm(b.reward), tm(b.done), h0)
    (loss["critic_loss"] + loss["actor_loss"]).backward()
    burn = trainer.config.burn_in
    assert obs.grad is not None and act.grad is not None
    assert torch.count_nonzero(obs.grad[:burn]) == 0
    assert torch.count_nonzero(act.grad[:burn]) == 0
    assert h0.grad is None or torch.count_nonzero(h0.grad) == 0
    # the trained steps do get gradient
    assert torch.count_nonzero(obs.grad[burn:]) > 0
    assert torch.count_nonzero(act.grad[burn:]) > 0


def test_polyak_averaging() -> None:
    trainer = SacTrainer(config(tau=0.25))
    fill(trainer)
    before_t = [p.detach().clone() for p in trainer.target.parameters()]
    trainer.train_step()
    after_c = [p.detach().clone() for p in trainer.critic.parameters()]
    for t_before, t_after, c in zip(before_t, trainer.target.parameters(), after_c, strict=True):
        assert torch.allclose(t_after, 0.75 * t_before + 0.25 * c, atol=1e-6)
    assert any(not torch.equal(a, b) for a, b in zip(before_t, trainer.target.parameters(), strict=True))


def test_gradient_clipping_bounds_the_step() -> None:
    # Huge rewards give huge critic gradients: the step must be Adam's on gradients clipped to norm 1, exactly
    # as torch.nn.utils.clip_grad_norm_ would clip them (here the clip is the fused Adam's grad divisor).
    trainer = SacTrainer(config(grad_clip=1.0))
    fill(trainer, reward_scale=1e4)
    before = [p.detach().clone() for p in trainer.critic.parameters()]
    reference = [torch.nn.Parameter(p.clone()) for p in before]
    ref_opt = torch.optim.Adam(reference, lr=trainer.config.critic_lr)
    for ref, p in zip(
        reference, trainer.critic.parameters(), strict=True
    ):  # the gradient as backward left it

        def capture(param: torch.Tensor, ref: torch.nn.Parameter = ref) -> None:
            assert param.grad is not None
            ref.grad = param.grad.clone()

        p.register_post_accumulate_grad_hook(capture)
    metrics = trainer.train_step()
    assert metrics is not None
    assert metrics["critic_grad_norm"] > 100.0  # reported before clipping
    clipped_norm = torch.nn.utils.clip_grad_norm_(reference, 1.0)
    assert float(clipped_norm) == pytest.approx(metrics["critic_grad_norm"], rel=1e-5)
    ref_opt.step()
    for ours, ref, old in zip(trainer.critic.parameters(), reference, before, strict=True):
        assert not torch.equal(ours.detach(), old)
        assert torch.allclose(ours.detach(), ref.detach(), atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("dropped", [(), ("native",), ("min_q",)])
def test_each_speed_up_gives_the_losses_and_gradients_of_plain_torch(dropped: tuple[str, ...]) -> None:
    """One pass's losses and every gradient with the speed-ups on equal SACBOT_ACCEL=none's (plain torch),
    and with a part dropped they equal both."""
    fill(probe := SacTrainer(config()))
    batch = probe.replay.sample(8, np.random.default_rng(3))
    found = []
    for chosen in (set(accel.PARTS) - set(dropped), ()):
        trainer = SacTrainer(config())
        with accel.using(chosen):
            loss = trainer.losses(*trainer._tensors(batch))
            (loss["critic_loss"] + loss["actor_loss"] + loss["alpha_loss"]).backward()
        found.append(
            [loss[k].detach() for k in ("critic_loss", "actor_loss", "alpha_loss", "q")]
            + [p.grad for p in trainer._all_params if p.grad is not None]
        )
    assert len(found[0]) == len(found[1]) == 4 + len(trainer._all_params)
    for a, r in zip(*found, strict=True):
        assert torch.allclose(a, r, atol=1e-5, rtol=1e-4)


def test_clipping_divisors_match_clip_grad_norm() -> None:
    gen = torch.Generator().manual_seed(5)
    groups = [[torch.zeros(3, 4, requires_grad=True), torch.zeros(5, requires_grad=True)] for _ in range(2)]
    for group, scale in zip(groups, (10.0, 0.01), strict=True):
        for p in group:
            p.grad = torch.randn(p.shape, generator=gen) * scale
    found = clipping_divisors(groups, 1.0)
    for group, (norm, divisor) in zip(groups, found, strict=True):
        grads = [p.grad.clone() for p in group if p.grad is not None]
        expect = torch.nn.utils.clip_grad_norm_(group, 1.0)
        assert torch.allclose(norm, expect)
        for g, p in zip(grads, group, strict=True):
            assert p.grad is not None and torch.allclose(g / divisor, p.grad, atol=1e-7)
    assert float(found[1][1]) == 1.0  # a small gradient is left alone


def test_alpha_moves_toward_the_entropy_target() -> None:
    # Fresh policy: entropy well above -4, so alpha must fall; with a target above the entropy it must rise.
    down = SacTrainer(config(alpha_lr=1e-2))
    fill(down)
    a0 = down.alpha
    for _ in range(5):
        m = down.train_step()
    assert m is not None and m["entropy"] > -4.0
    assert down.alpha < a0
    up = SacTrainer(config(alpha_lr=1e-2, target_entropy=50.0))
    fill(up)
    for _ in range(5):
        up.train_step()
    assert up.alpha > a0


def test_the_critics_warm_up_alone_then_the_actor_and_temperature_step() -> None:
    trainer = SacTrainer(config(critic_warmup=3, alpha_lr=1e-2))
    fill(trainer)
    actor0, alpha0 = trainer.actor_arrays(), trainer.alpha
    critic0 = [p.detach().clone() for p in trainer.critic.parameters()]
    for _ in range(3):
        trainer.train_step()
    assert all(np.array_equal(a, actor0[k]) for k, a in trainer.actor_arrays().items())
    assert trainer.alpha == alpha0
    assert any(not torch.equal(a, b) for a, b in zip(critic0, trainer.critic.parameters(), strict=True))
    trainer.train_step()  # update 4: past the warm-up
    assert any(not np.array_equal(a, actor0[k]) for k, a in trainer.actor_arrays().items())
    assert trainer.alpha != alpha0
    with pytest.raises(UserError, match="critic_warmup must be 0 or more"):
        config(critic_warmup=-1)


def test_the_anchor_holds_the_actor_near_the_one_it_started_from() -> None:
    drifts = []
    for weight in (1e-9, 100.0):  # ~off (the term is still measured), then on
        trainer = SacTrainer(config(anchor=weight))
        fill(trainer)
        first = trainer.train_step()  # freezes the anchor before its losses
        assert first is not None and first["anchor_loss"] == pytest.approx(0.0, abs=1e-10)  # its own anchor
        for _ in range(30):
            m = trainer.train_step()
        assert m is not None
        drifts.append(m["anchor_loss"])
    assert drifts[1] < 0.5 * drifts[0]
    plain = SacTrainer(config())
    fill(plain)
    m = plain.train_step()
    assert m is not None and "anchor_loss" not in m  # off: not measured
    with pytest.raises(UserError, match="anchor must be 0"):
        config(anchor=-1.0)


def test_the_anchor_on_the_gun_alone_leaves_the_movement_free() -> None:
    """`anchor_movement` 0: an actor moved off its anchor in the movement entries (turn, speed) alone costs
    nothing; at 1 (the default) the same move is paid for."""
    losses = []
    for scale in (0.0, 1.0):
        trainer = SacTrainer(config(anchor=1.0, anchor_movement=scale, critic_warmup=2))
        fill(trainer)
        assert trainer.train_step() is not None  # freezes the anchor; the warm-up holds the actor
        with torch.no_grad():
            trainer.actor.mu.bias[:2] += 0.5  # the turn and speed means move; the gun and fire stay
        m = trainer.train_step()
        assert m is not None
        losses.append(m["anchor_loss"])
    assert losses[0] == pytest.approx(0.0, abs=1e-10) and losses[1] > 1e-3
    with pytest.raises(UserError, match="anchor_movement must be 0"):
        config(anchor=1.0, anchor_movement=float("nan"))


def test_metrics_and_snapshot_publication() -> None:
    trainer = SacTrainer(config())
    assert trainer.train_step() is None  # empty replay
    fill(trainer)
    snap0 = trainer.snapshot
    m = trainer.train_step()
    assert m is not None
    for key in ("critic_loss", "actor_loss", "alpha_loss", "alpha", "updates", "replay_size"):
        assert np.isfinite(m[key]), key
    assert m["updates"] == 1 and m["replay_size"] == len(trainer.replay)
    snap1 = trainer.snapshot
    assert snap1.version == snap0.version + 1 and snap1.updates == 1
    arr = snap1.arrays["actor.fc_in.weight"]
    with pytest.raises(ValueError):
        arr[0, 0] = 1.0  # immutable
    assert not np.array_equal(arr, snap0.arrays["actor.fc_in.weight"])


def test_state_arrays_cover_everything_and_match_specs() -> None:
    trainer = SacTrainer(config())
    arrays = trainer.state_arrays()
    specs = trainer.array_specs()
    assert set(arrays) == set(specs)
    for name, (shape, dtype) in specs.items():
        assert arrays[name].shape == shape and str(arrays[name].dtype) == dtype, name
    for prefix in (
        "actor.",
        "critic1.",
        "critic2.",
        "target1.",
        "target2.",
        "adam.actor.",
        "adam.critic.",
        "adam.alpha.",
    ):
        assert any(k.startswith(prefix) for k in arrays), prefix
    assert "log_alpha" in arrays and "critic1.gru.weight_hh_l0" in arrays
    assert trainer.network_sizes()["hidden"] == 16
    assert set(trainer.actor_arrays()) == {k for k in arrays if k.startswith("actor.")}
    bad = dict(arrays)
    bad["critic2.q.bias"] = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="critic2.q.bias"):
        trainer.load_state_arrays(bad)
    del bad["critic2.q.bias"]
    with pytest.raises(ValueError, match="lacks"):
        trainer.load_state_arrays(bad)


def test_resume_from_state_arrays_is_bit_identical() -> None:
    a = SacTrainer(config())
    fill(a)
    for _ in range(3):
        a.train_step()
    saved = {k: v.copy() for k, v in a.state_arrays().items()}
    for _ in range(3):
        a.train_step()
    final_a = a.state_arrays()

    b = SacTrainer(config(seed=99))  # different initial weights and generators: all must be overwritten
    fill(b)  # the same replay contents (the replay is not part of the arrays)
    b.load_state_arrays(saved)
    assert b.updates == 3
    for _ in range(3):
        b.train_step()
    final_b = b.state_arrays()
    assert set(final_a) == set(final_b)
    for k in final_a:
        assert np.array_equal(final_a[k], final_b[k]), k


@pytest.mark.parametrize("history", ["online", "target"])
def test_update_accepts_an_explicit_batch(history: str) -> None:
    trainer = SacTrainer(config(target_history=history))
    sz, L = SMALL, trainer.config.window
    rng = np.random.default_rng(0)
    batch = Batch(
        obs=rng.uniform(-1, 1, (4, L + 1, sz.state_dim)).astype(np.float32),
        action=rng.uniform(-1, 1, (4, L, sz.action_dim)).astype(np.float32),
        reward=rng.standard_normal((4, L)).astype(np.float32),
        done=np.zeros((4, L), np.float32),
        hidden=np.zeros((4, sz.hidden), np.float32),
    )
    m = trainer.update(batch)
    assert m["updates"] == 1 and np.isfinite(m["critic_loss"])


def test_asking_for_cuda_without_it_is_one_clear_user_error() -> None:
    if torch.cuda.is_available():
        assert resolve_device("cuda").type == "cuda"
    else:
        with pytest.raises(UserError, match="torch sees no CUDA device"):
            SacTrainer(config(device="cuda"))


def test_eager_reference_learns_the_same_losses_shape() -> None:
    """The bench's yardstick runs a full update on the trainer's batches and its critic loss goes down on a
    fixed batch (it is a working SAC update, not a busy loop)."""
    from sacbot.bench.eager_reference import EagerSac

    trainer = SacTrainer(config())
    fill(trainer)
    eager = EagerSac(SMALL, burn_in=trainer.config.burn_in)
    batch = trainer.replay.sample(8, np.random.default_rng(0))
    losses = [eager.update(batch) for _ in range(60)]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]


def _n_step_reference(
    rew: np.ndarray, done: np.ndarray, value: np.ndarray, gamma: float, n: int
) -> np.ndarray:
    """Per row, by hand: sum rewards until a terminal or n steps or the window's end, then bootstrap."""
    steps, batch = rew.shape
    out = np.zeros_like(rew)
    for t in range(steps):
        for i in range(batch):
            total, k = 0.0, 0
            while True:
                total += gamma**k * rew[t + k, i]
                if done[t + k, i]:
                    break
                if k == n - 1 or t + k == steps - 1:
                    total += gamma ** (k + 1) * value[t + k, i]
                    break
                k += 1
            out[t, i] = total
    return out


@pytest.mark.parametrize("n", [1, 2, 5, 16])
def test_n_step_targets_match_a_hand_written_sum(n: int) -> None:
    from sacbot.agent.n_step import n_step_targets

    rng = np.random.default_rng(n)
    rew = rng.standard_normal((16, 6)).astype(np.float32)
    done = (rng.uniform(size=(16, 6)) < 0.1).astype(np.float32)
    value = rng.standard_normal((16, 6)).astype(np.float32)
    got = n_step_targets(torch.from_numpy(rew), torch.from_numpy(done), torch.from_numpy(value), 0.9, n)
    np.testing.assert_allclose(got.numpy(), _n_step_reference(rew, done, value, 0.9, n), rtol=1e-5, atol=1e-5)


def test_n_step_one_is_the_one_step_update_and_five_differs() -> None:
    one, five = SacTrainer(config(n_step=1)), SacTrainer(config(n_step=5))
    fill(one)
    fill(five)
    m_one, m_five = one.train_step(), five.train_step()
    assert m_one is not None and m_five is not None
    assert m_one["actor_loss"] == pytest.approx(m_five["actor_loss"])  # same batch and networks
    assert m_one["critic_loss"] != pytest.approx(m_five["critic_loss"])  # other targets


def test_a_fresh_share_trains_on_the_rounds_after_the_kept_replay() -> None:
    """Kept rounds full of NaN poison any update that samples them: with fresh_fraction 1 none does."""
    kept = SacTrainer(config())
    fill(kept, rounds=4)
    arrays = kept.replay.export_rounds(10_000)
    arrays["reward"][:] = np.nan
    for share, finite in ((1.0, True), (0.0, False)):
        trainer = SacTrainer(config(fresh_fraction=share))
        trainer.replay.extend_rounds(arrays)
        fill(trainer, rounds=1, seed=1)  # one fresh round
        passes = [trainer.train_step() for _ in range(5)]
        assert all(m is not None and np.isfinite(m["critic_loss"]) == finite for m in passes), share


def test_a_bad_n_step_or_anneal_is_one_clear_error() -> None:
    with pytest.raises(UserError, match="fresh_fraction must be 0 to 1"):
        config(fresh_fraction=1.5)
    with pytest.raises(UserError, match="n_step"):
        config(n_step=0)
    with pytest.raises(UserError, match="n_step"):
        config(n_step=17)
    with pytest.raises(UserError, match="kickstart_anneal"):
        config(kickstart_anneal=-1)
    with pytest.raises(UserError, match="need kickstart_anneal"):
        config(kickstart=50.0, kickstart_floor=10.0)  # a floor without a fade
    with pytest.raises(UserError, match="kickstart_anneal_from must be"):
        config(kickstart=50.0, kickstart_anneal=1000, kickstart_anneal_from=1000)
    with pytest.raises(UserError, match="kickstart_floor must be 0 to kickstart"):
        config(kickstart=5.0, kickstart_anneal=1000, kickstart_floor=10.0)


def test_the_kickstart_weight_fades_linearly_to_zero_and_stays_there() -> None:
    cfg = config(kickstart=50.0, kickstart_anneal=1000)
    assert [cfg.kickstart_weight(u) for u in (0, 500, 1000, 5000)] == [50.0, 25.0, 0.0, 0.0]
    assert config(kickstart=50.0).kickstart_weight(10**9) == 50.0  # no annealing: constant


def test_the_kickstart_weight_holds_then_fades_to_its_floor() -> None:
    cfg = config(kickstart=50.0, kickstart_anneal=3000, kickstart_anneal_from=1000, kickstart_floor=10.0)
    assert [cfg.kickstart_weight(u) for u in (0, 1000, 2000, 3000, 10**6)] == [50.0, 50.0, 30.0, 10.0, 10.0]


@pytest.mark.parametrize(
    ("angles", "energy", "leads", "width"),
    [(True, False, False, 25), (False, True, False, 19), (True, True, False, 27), (False, False, True, 21),
     (True, True, True, 31)],
)  # fmt: skip
def test_extra_inputs_widen_the_first_layers_and_train_on_the_stored_states(
    angles: bool, energy: bool, leads: bool, width: int
) -> None:
    from sacbot.agent.features import network_inputs
    from sacbot.agent.inference import FastActor

    sizes = NetworkSizes(
        embed=16, hidden=16, head=8, angle_inputs=angles, energy_inputs=energy, lead_inputs=leads
    )
    trainer = SacTrainer(config(sizes=sizes))
    assert trainer.replay.obs.shape[1] == 17  # the replay keeps the state; the networks widen it
    assert trainer.actor.fc_in.in_features == width
    assert trainer.critic.fc_in_weight.shape[-1] == width + 4
    fill(trainer)
    for _ in range(3):
        m = trainer.train_step()
    assert m is not None and np.isfinite(m["critic_loss"])
    built = trainer.network_sizes()
    assert built["angle_inputs"] is angles and built["energy_inputs"] is energy
    assert built["lead_inputs"] is leads
    # the actor it publishes acts on plain 17-entry states as the torch actor does on the widened inputs
    states = np.random.default_rng(1).uniform(-1, 1, (6, 17)).astype(np.float32)
    fast = FastActor(trainer.actor_arrays(), sizes)
    with torch.no_grad():
        mu, _, _ = trainer.actor(torch.from_numpy(network_inputs(states, sizes))[:, None], torch.zeros(6, 16))
    actions, _ = fast.step_batch(states, np.zeros((6, 16), np.float32))
    assert np.allclose(actions, np.tanh(mu[:, 0].numpy()), atol=1e-5)
    # arrays of one width do not load into networks of the other
    with pytest.raises(ValueError, match="actor.fc_in.weight"):
        SacTrainer(config()).load_state_arrays(trainer.state_arrays())


def test_wave_and_threat_inputs_reach_the_actor_and_the_critics() -> None:
    """With wave, threat and bullet inputs, the replay stores state, wave inputs, threat inputs, bullet
    inputs; the actor reads the state, the wave and threat inputs (then the angle inputs), the critics all of
    it."""
    sizes = NetworkSizes(
        embed=16,
        hidden=16,
        head=8,
        angle_inputs=True,
        wave_inputs=True,
        threat_inputs=True,
        bullet_inputs=True,
    )
    trainer = SacTrainer(config(sizes=sizes))
    observed = 17 + 12 + 15
    assert trainer.replay.obs.shape[1] == observed + 18
    assert trainer.actor.fc_in.in_features == observed + 8
    assert trainer.critic.fc_in_weight.shape[-1] == observed + 8 + 18 + 4
    fill(trainer)
    batch = trainer.replay.sample(8, np.random.default_rng(0))
    stored = batch.obs.swapaxes(0, 1)
    obs, _, _, _, h0, critic_obs, _ = trainer._tensors(batch)
    assert torch.equal(obs[..., :observed], torch.from_numpy(stored[..., :observed].copy()))
    assert torch.equal(critic_obs[..., : observed + 8], obs)
    assert torch.equal(critic_obs[..., observed + 8 :], torch.from_numpy(stored[..., observed:].copy()))
    for columns in (slice(17, 29), slice(29, observed)):  # other waves only, other threats only
        moved = np.array(batch.obs)
        moved[..., columns] = np.random.default_rng(1).uniform(-1, 1, moved[..., columns].shape)
        obs_moved = trainer._tensors(Batch(moved, batch.action, batch.reward, batch.done, batch.hidden))[0]
        with torch.no_grad():
            mu, _, _ = trainer.actor.sequence_tm(obs, h0)
            mu_moved, _, _ = trainer.actor.sequence_tm(obs_moved, h0)
        assert not torch.allclose(mu, mu_moved)  # the actor reads them
    m = trainer.train_step()
    assert m is not None and np.isfinite(m["critic_loss"])
    assert trainer.network_sizes()["wave_inputs"] is True and trainer.network_sizes()["threat_inputs"] is True


def test_bullet_inputs_reach_the_critics_and_never_the_actor() -> None:
    """The replay stores the critics' bullet inputs after each state; `_tensors` hands them to the critics
    (after the actor's widened inputs) and never to the actor."""
    sizes = NetworkSizes(embed=16, hidden=16, head=8, angle_inputs=True, bullet_inputs=True)
    trainer = SacTrainer(config(sizes=sizes))
    assert trainer.replay.obs.shape[1] == 17 + 18
    assert trainer.actor.fc_in.in_features == 25
    assert trainer.critic.fc_in_weight.shape[-1] == 25 + 18 + 4
    fill(trainer)
    batch = trainer.replay.sample(8, np.random.default_rng(0))
    moved = np.array(batch.obs)
    moved[..., 17:] = np.random.default_rng(1).uniform(-1, 1, moved[..., 17:].shape)  # other bullets only
    other = Batch(moved, batch.action, batch.reward, batch.done, batch.hidden)
    outputs = []
    for b in (batch, other):
        obs, act, _, _, h0, critic_obs, _ = trainer._tensors(b)
        assert obs.shape[-1] == 25 and critic_obs.shape[-1] == 43
        assert torch.equal(critic_obs[..., :25], obs)
        assert torch.equal(critic_obs[..., 25:], torch.from_numpy(b.obs.swapaxes(0, 1)[..., 17:].copy()))
        with torch.no_grad():
            mu, _, _ = trainer.actor.sequence_tm(obs, h0)
            x = torch.cat([critic_obs[:-1], act], -1)
            q, _, _ = trainer.critic.sequence_tm(x, trainer.critic.initial_hidden(8))
        outputs.append((mu, q))
    assert torch.equal(outputs[0][0], outputs[1][0])  # the actor is blind to them
    assert not torch.allclose(outputs[0][1], outputs[1][1])  # the critics read them
    for _ in range(3):
        m = trainer.train_step()
    assert (
        m is not None and np.isfinite(m["critic_loss"]) and trainer.network_sizes()["bullet_inputs"] is True
    )
