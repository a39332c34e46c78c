import math

import numpy as np
import pytest
import torch

from methods.dispat import F_DIVERGENCES, get_f_divergence, spin_objective

P = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
Q = torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64)


@pytest.mark.parametrize("name", sorted(F_DIVERGENCES))
def test_bound_is_tight_at_the_optimal_critic(name):
    fd = get_f_divergence(name)
    u = P / Q
    d_f = float((Q * fd.f(u)).sum())
    v_star = fd.activation_inverse(fd.f_prime(u))
    bound = float(
        (P * fd.activation(v_star)).sum() - (Q * fd.conjugate_of_activation(v_star)).sum()
    )
    assert bound == pytest.approx(d_f, abs=1e-9)
    # P != Q: above the value at P = Q, which is f(1) (0 except for GAN's -log 4).
    assert d_f > float(fd.f(torch.tensor(1.0, dtype=torch.float64))) + 1e-6


@pytest.mark.parametrize("name", sorted(F_DIVERGENCES))
def test_bound_never_exceeds_the_divergence(name):
    fd = get_f_divergence(name)
    d_f = float((Q * fd.f(P / Q)).sum())
    gen = torch.Generator().manual_seed(0)
    for _ in range(200):
        v = torch.randn(3, generator=gen, dtype=torch.float64) * 2
        bound = float((P * fd.activation(v)).sum() - (Q * fd.conjugate_of_activation(v)).sum())
        assert bound <= d_f + 1e-9


@pytest.mark.parametrize("name", sorted(F_DIVERGENCES))
def test_activation_inverse_roundtrips(name):
    fd = get_f_divergence(name)
    v = torch.linspace(-3, 3, 13, dtype=torch.float64)
    np.testing.assert_allclose(
        fd.activation_inverse(fd.activation(v)).numpy(), v.numpy(), atol=1e-9
    )


def test_gan_bound_is_the_discriminator_objective_not_spins_loss():
    """``gan``: E_P[log σ(v)] + E_Q[log(1 − σ(v))], real and synthetic rows apart. SPIN's
    objective −log(1 + e^{−(v_r − v_s)}) is a function of the pair's gap: at v_r = v_s = 1 the
    two are −1.6265 and −0.6931."""
    fd = get_f_divergence("gan")
    v_p, v_q = torch.tensor([0.3, -1.0]), torch.tensor([0.5, 2.0])
    expected = torch.log(torch.sigmoid(v_p)).mean() + torch.log(1 - torch.sigmoid(v_q)).mean()
    assert float(fd.bound(v_p, v_q)) == pytest.approx(float(expected), rel=1e-6)
    one = torch.tensor([1.0])
    assert float(fd.bound(one, one)) == pytest.approx(
        math.log(1 / (1 + math.exp(-1))) + math.log(1 - 1 / (1 + math.exp(-1)))
    )
    assert float(fd.bound(one, one)) == pytest.approx(-1.6265, abs=1e-4)
    assert float(spin_objective(one, one)) == pytest.approx(-math.log(2.0))


def test_spin_objective_is_the_mean_log_sigmoid_of_the_pair_gap():
    v_r, v_s = torch.tensor([0.3, -1.0, 2.0]), torch.tensor([0.5, 2.0, -1.0])
    gaps = [0.3 - 0.5, -1.0 - 2.0, 2.0 + 1.0]
    want = sum(-math.log1p(math.exp(-g)) for g in gaps) / 3
    assert float(spin_objective(v_r, v_s)) == pytest.approx(want, rel=1e-6)
    # Only the gap matters: shifting both critics leaves SPIN unchanged (not the gan bound).
    shifted = spin_objective(v_r + 5.0, v_s + 5.0)
    assert float(shifted) == pytest.approx(want, rel=1e-6)
    gan = get_f_divergence("gan")
    assert float(gan.bound(v_r + 5.0, v_s + 5.0)) != pytest.approx(float(gan.bound(v_r, v_s)))


def test_unknown_divergence():
    with pytest.raises(ValueError, match="unknown f-divergence"):
        get_f_divergence("wasserstein")
