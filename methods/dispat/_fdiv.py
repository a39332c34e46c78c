"""f-divergences in the f-GAN variational form (Nowozin, Cseke & Tomioka, NeurIPS 2016).

For a convex ``f`` with ``f(1) = 0`` and its Fenchel conjugate ``f*``,

    D_f(P || Q) >= sup_T  E_P[T(x)] - E_Q[f*(T(x))]

with equality at ``T*(x) = f'(p(x) / q(x))``. The critic is written ``T = g_f(v)`` for an
unconstrained ``v`` and the output activation ``g_f`` of the paper's Table 6, which keeps ``T``
inside the domain of ``f*``. Each entry gives ``g_f(v)`` and the composite ``f*(g_f(v))`` in a
numerically stable closed form, plus ``f``, ``f'`` and ``g_f^{-1}`` for testing the bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

Tensor = torch.Tensor
LOG2 = math.log(2.0)


@dataclass(frozen=True)
class FDivergence:
    name: str
    f: Callable[[Tensor], Tensor]  # generator f(u), u = p/q > 0
    f_prime: Callable[[Tensor], Tensor]
    activation: Callable[[Tensor], Tensor]  # g_f(v)
    conjugate_of_activation: Callable[[Tensor], Tensor]  # f*(g_f(v))
    activation_inverse: Callable[[Tensor], Tensor]  # g_f^{-1}(t)

    def bound(self, v_p: Tensor, v_q: Tensor) -> Tensor:
        """The variational lower bound ``E_P[g(v)] - E_Q[f*(g(v))]`` from critic outputs."""
        return self.activation(v_p).mean() - self.conjugate_of_activation(v_q).mean()


F_DIVERGENCES: dict[str, FDivergence] = {
    "kl": FDivergence(
        "kl",
        f=lambda u: u * torch.log(u),
        f_prime=lambda u: 1 + torch.log(u),
        activation=lambda v: v,
        conjugate_of_activation=lambda v: torch.exp(v - 1),
        activation_inverse=lambda t: t,
    ),
    "reverse_kl": FDivergence(
        "reverse_kl",
        f=lambda u: -torch.log(u),
        f_prime=lambda u: -1 / u,
        activation=lambda v: -torch.exp(-v),
        conjugate_of_activation=lambda v: v - 1,
        activation_inverse=lambda t: -torch.log(-t),
    ),
    "pearson": FDivergence(
        "pearson",
        f=lambda u: (u - 1) ** 2,
        f_prime=lambda u: 2 * (u - 1),
        activation=lambda v: v,
        conjugate_of_activation=lambda v: v**2 / 4 + v,
        activation_inverse=lambda t: t,
    ),
    "squared_hellinger": FDivergence(
        "squared_hellinger",
        f=lambda u: (torch.sqrt(u) - 1) ** 2,
        f_prime=lambda u: 1 - 1 / torch.sqrt(u),
        activation=lambda v: 1 - torch.exp(-v),
        conjugate_of_activation=lambda v: torch.exp(v) - 1,
        activation_inverse=lambda t: -torch.log(1 - t),
    ),
    "js": FDivergence(
        "js",
        f=lambda u: -(u + 1) * torch.log((1 + u) / 2) + u * torch.log(u),
        f_prime=lambda u: torch.log(2 * u / (1 + u)),
        activation=lambda v: LOG2 - F.softplus(-v),
        conjugate_of_activation=lambda v: F.softplus(v) - LOG2,
        activation_inverse=lambda t: -torch.log(2 * torch.exp(-t) - 1),
    ),
    "gan": FDivergence(
        "gan",
        f=lambda u: u * torch.log(u) - (u + 1) * torch.log(u + 1),
        f_prime=lambda u: torch.log(u / (u + 1)),
        activation=lambda v: -F.softplus(-v),
        conjugate_of_activation=lambda v: F.softplus(v),
        activation_inverse=lambda t: t - torch.log(-torch.expm1(t)),
    ),
}


def get_f_divergence(name: str) -> FDivergence:
    try:
        return F_DIVERGENCES[name]
    except KeyError:
        raise ValueError(f"unknown f-divergence {name!r}; known: {sorted(F_DIVERGENCES)}") from None
