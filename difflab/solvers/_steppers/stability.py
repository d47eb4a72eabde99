"""Is a fixed step stable? The Jacobian's spectral radius against the method's stability region.

An explicit method of step ``h`` damps a decaying mode ``exp(lambda t)`` only while
``h * lambda`` lies in its stability region, whose reach along the negative real axis is
2 for Euler and Heun and about 2.785 for RK4 (leapfrog: 2 along the imaginary axis). A
step past it amplifies the stiffest mode at every step: the run ends in garbage, finite
or not. The dominant eigenvalue of ``J = df/dy`` is estimated by power iteration on
Jacobian-vector products: no Jacobian is formed, so it costs a few vector-field
evaluations whatever the size of the state, lowers on every backend, and works under
``vmap``; it is taken through ``stop_gradient``, so derivatives of a run do not see it.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

ITERATIONS = 16


def dominant_eigenvalue(f, y, iterations: int = ITERATIONS):
    """``(rho, growing)``: the spectral radius of ``J = f'(y)``, and whether its dominant
    eigenvalue is real and positive (then the solution itself grows along it).

    ``rho`` is the geometric mean of ``|J v|`` over the second half of the iterations,
    which converges for a dominant complex pair too (an oscillator's ``J`` stretches
    ``v`` by turns, not by the same factor each time).
    """
    y = jax.lax.stop_gradient(y)
    _, jvp = jax.linearize(f, y)
    tiny = jnp.finfo(y.dtype).tiny

    def power(v, _):
        w = jvp(v)
        norm = jnp.maximum(jnp.linalg.norm(w), tiny)
        return w / norm, jnp.log(norm)

    v = jax.random.normal(jax.random.key(0), y.shape, y.dtype)  # touches every mode
    v, logs = jax.lax.scan(power, v / jnp.linalg.norm(v), None, length=iterations)
    rho = jnp.exp(jnp.mean(logs[iterations // 2:]))
    growing = jnp.linalg.norm(jvp(v) - rho * v) <= 0.1 * rho
    return rho, growing


def stable_step(stepper, model, t, y):
    """The largest step ``stepper`` keeps stable at ``(t, y)``; ``inf`` when nothing limits
    it (no stability radius, a dominant eigenvalue that is real and positive, so that the
    solution itself grows, or a vector field JAX cannot differentiate)."""
    radius = getattr(stepper, "stability_radius", None)
    if radius is None:
        return jnp.full((), jnp.inf, y.dtype)
    model = jax.tree.map(lambda x: jax.lax.stop_gradient(x) if eqx.is_array(x) else x, model)
    try:
        rho, growing = dominant_eigenvalue(lambda y: model.vector_field(t, y), y)
    except (TypeError, ValueError, NotImplementedError):  # e.g. a callback without a JVP
        return jnp.full((), jnp.inf, y.dtype)
    limited = jnp.isfinite(rho) & (rho > 0) & ~growing
    return jnp.where(limited, radius / jnp.where(limited, rho, 1.0), jnp.inf)
