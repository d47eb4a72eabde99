"""The saddle a long-period orbit passes by, and where a branch of such orbits meets its
homoclinic orbit.

Near an orbit homoclinic to a hyperbolic saddle, at ``p = p_h``, the cycles linger by the
saddle and their period grows like ``T ~ -ln|p - p_h| / lambda``, ``lambda`` the leading
rate (the least ``|Re|`` of the saddle's eigenvalues; Kuznetsov, *Elements of Applied
Bifurcation Theory*, 6.2): ``p = p_h + C exp(-lambda T)``, which two orbits of the branch
solve for ``p_h``.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .equilibria import classify, eigenvalues, jacobian, roots_from

NEAR = 1e-2  # the path passes the saddle closer than this part of its size


def saddle_near(model, path, t) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The hyperbolic saddle nearest the slowest points of the closed ``path`` (k, n)
    of ``model``, its eigenvalues (largest real part first) and the path's least
    distance from it relative to the path's size; ``None`` if there is none."""
    path = np.asarray(path, dtype=float)
    speed = np.asarray(_speeds(model, jnp.asarray(path), jnp.asarray(t, float)))
    roots = roots_from(model, path[np.argsort(speed)[:3]], t)
    if not len(roots):
        return None
    gaps = np.array([np.min(np.linalg.norm(path - x, axis=1)) for x in roots])
    x = roots[int(np.argmin(gaps))]
    values = eigenvalues(_jacobian(model, jnp.asarray(x), jnp.asarray(t, float)))
    if classify(values) != "saddle":
        return None
    size = np.linalg.norm(path.max(axis=0) - path.min(axis=0))
    return x, values, float(gaps.min() / size) if size > 0 else np.inf


@eqx.filter_jit
def _speeds(model, path, t):
    return jnp.linalg.norm(jax.vmap(lambda y: model.vector_field(t, y))(path), axis=1)


_jacobian = eqx.filter_jit(jacobian)  # compiled once per model class, not traced per orbit


def homoclinic_value(values, periods, rate) -> float:
    """``p_h`` from the first and last of the orbits' parameter ``values`` and
    ``periods``, with ``p = p_h + C exp(-rate T)``."""
    (p1, p2), (t1, t2) = (values[0], values[-1]), (periods[0], periods[-1])
    r = np.exp(-rate * (t2 - t1))
    return float(p2 + (p2 - p1) * r / (1 - r)) if 0 < r < 1 else float(p2)


def describe(values) -> str:
    """Eigenvalues in words: ``-0.6626, 0.4226`` (complex ones as ``a+bj``)."""
    return ", ".join(f"{v.real:.4g}" if v.imag == 0 else f"{v:.4g}" for v in values)


def follows(values, periods, rate) -> bool:
    """Whether the last three orbits' parameter ``values`` close in as
    ``p = p_h + C exp(-rate T)`` says for their ``periods`` (the ratio of the last two
    steps in ``p`` within a factor ``e^{+-1/2}`` of its logarithm), the periods growing."""
    (p1, p2, p3), (t1, t2, t3) = values[-3:], periods[-3:]
    if not (t1 < t2 < t3 and (p3 - p2) * (p2 - p1) > 0):
        return False
    a, b = np.exp(-rate * (t2 - t1)), np.exp(-rate * (t3 - t2))
    seen, said = np.log((p3 - p2) / (p2 - p1)), np.log(a * (1 - b) / (1 - a))
    return bool(said < 0 and 0.5 < seen / said < 2.0)


def homoclinic_end(model, param, values, periods, path, t, near=NEAR) -> str | None:
    """The status of a branch of cycles (the last three orbits' parameter ``values`` and
    ``periods``, the last orbit's ``path``) that ends at a homoclinic orbit: the last
    passes a saddle closer than ``near`` of its size and the three close in on it as
    :func:`follows` says; else ``None``."""
    if len(values) < 3:
        return None
    at = model.replace(**{param: float(values[-1])})
    found = saddle_near(at, path, t)
    if found is None or found[2] > near:
        return None
    x, eig, _ = found
    rate = np.min(np.abs(eig.real))
    if not follows(values, periods, rate):
        return None
    p_h = homoclinic_value(values, periods, rate)
    x = np.where(np.abs(x) > 1e-12 * max(1.0, np.max(np.abs(x))), x, 0.0)  # round-off: 0
    state = ", ".join(f"{v:.6g}" for v in x)
    return (f"period grows without bound: homoclinic orbit near {param}={p_h:.8g}, to the "
            f"saddle at ({state}) with eigenvalues {describe(eig)}")
