"""The first Lyapunov coefficient at a Hopf point, from exact derivatives.

Kuznetsov, *Elements of Applied Bifurcation Theory* (3rd ed., eq. 3.20): with
``A q = i w q``, ``A^T p = -i w p``, ``<q, q> = <p, q> = 1``,

    l1 = Re(<p, C(q,q,q*)> - 2 <p, B(q, A^-1 B(q,q*))> + <p, B(q*, (2iw - A)^-1 B(q,q))>) / (2w)

where ``B`` and ``C`` are the second and third derivatives of the vector field, taken
here by nested ``jax.jvp``. ``l1 < 0``: supercritical (a stable cycle is born);
``l1 > 0``: subcritical.
"""

import itertools

import equinox as eqx
import jax
import numpy as np

from .equilibria import jacobian


def _directional(model, t, x, directions):
    """The derivative of the vector field at ``x`` along each of ``directions`` in turn."""
    def along(g, u):
        return lambda y: jax.jvp(g, (y,), (u,))[1]

    f = lambda y: model.vector_field(t, y)
    for u in directions:
        f = along(f, u)
    return f(x)


_derivative = eqx.filter_jit(_directional)
_jacobian = eqx.filter_jit(jacobian)


def _multilinear(model, t, x, vectors) -> np.ndarray:
    """A real symmetric multilinear form extended to complex ``vectors``."""
    total = 0j
    for parts in itertools.product((0, 1), repeat=len(vectors)):
        real = [np.ascontiguousarray(v.imag if k else v.real) for v, k in zip(vectors, parts)]
        total = total + (1j ** sum(parts)) * np.asarray(_derivative(model, t, x, real))
    return total


def first_lyapunov_coefficient(model, x, t=0.0) -> tuple[float, float]:
    """``(l1, omega)`` at an equilibrium ``x`` with a pair of eigenvalues ``+-i omega``."""
    x = np.asarray(x, dtype=float)
    a = np.asarray(_jacobian(model, x, t), dtype=float)
    values, vectors = np.linalg.eig(a)
    i = int(np.argmin(np.abs(values.real) + np.where(values.imag > 0, 0, np.inf)))
    omega = float(values[i].imag)
    q = vectors[:, i] / np.linalg.norm(vectors[:, i])
    values_t, vectors_t = np.linalg.eig(a.T)
    p = vectors_t[:, int(np.argmin(np.abs(values_t - (-1j * omega))))]
    p = p / np.conj(np.vdot(p, q))
    qb = np.conj(q)
    bqq = _multilinear(model, t, x, [q, q])
    bqqb = _multilinear(model, t, x, [q, qb]).real
    term = (_multilinear(model, t, x, [q, q, qb])
            - 2 * _multilinear(model, t, x, [q, np.linalg.solve(a, bqqb)])
            + _multilinear(model, t, x, [qb, np.linalg.solve(2j * omega * np.eye(len(x)) - a,
                                                            bqq)]))
    return float(np.vdot(p, term).real / (2 * omega)), omega
