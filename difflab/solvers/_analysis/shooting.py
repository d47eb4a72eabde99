"""Multiple shooting for periodic orbits, compiled.

An orbit of period ``T`` is ``m`` points ``x_0 .. x_{m-1}`` on it, one at the start of
each of ``m`` equal segments, with the period scaled out (``dy/ds = T f(y, p)``, ``s`` in
``[0, 1]``). Each segment is ``k`` RK4 steps whose sizes, the ``mesh`` ``(m, k)``, are
traced values (a mesh adapted to the orbit does not recompile; nor, in the corrector, a
mesh refined to more steps within the length it was padded to). The unknowns are
``u = [x_0, .., x_{m-1}, T, p]``; the equations are ``phi(x_i) - x_{i+1} = 0``
(cyclically), a Poincare phase condition ``(x_0 - r) . d = 0`` and one more row ``c``
(the arclength, or the parameter held fixed). The Jacobian is assembled from each
segment's exact ``jax.jacfwd``; the monodromy matrix is the product of the segments'
state Jacobians (returned one by one: their product is ill-conditioned on strongly
unstable orbits, so the multipliers are taken from the blocks, see ``periodic.py``).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.scipy.linalg import block_diag


def _field(model, param, t):
    """``f(y, p)``: the vector field with ``param`` set to ``p``."""
    return lambda y, p: model.replace(**{param: p}).vector_field(t, y)


def _rk4(g, y, h):
    """One RK4 step of size ``h`` on ``dy/ds = g(y)``."""
    k1 = g(y)
    k2 = g(y + 0.5 * h * k1)
    k3 = g(y + 0.5 * h * k2)
    k4 = g(y + h * k3)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def _segment(f, x, period, p, hs):
    """RK4 steps of sizes ``hs`` on ``dy/ds = period * f(y, p)`` from ``x``: (end, path)."""
    def step(y, h):
        y = _rk4(lambda z: period * f(z, p), y, h)
        return y, y

    return jax.lax.scan(step, x, hs)


def _segment_end(f, x, period, p, hs, count=None):
    """The end of the first ``count`` steps of ``_segment`` (all of ``hs`` if ``None``). A
    traced ``count`` takes the steps in a loop of that many turns: a mesh refined within
    the length of ``hs`` is the same program (not reverse-differentiable then)."""
    def step(j, y):
        return _rk4(lambda z: period * f(z, p), y, hs[j])

    return jax.lax.fori_loop(0, hs.shape[0] if count is None else count, step, x)


def _unpack(u, m):
    return u[:-2].reshape(m, -1), u[-2], u[-1]


def _blocks(f, u, mesh, count=None):
    """Each segment's end (after ``count`` steps of ``mesh``, all if ``None``) and its
    Jacobians in ``x``, ``T`` and ``p``."""
    xs, period, p = _unpack(u, mesh.shape[0])

    def flow(x, period, p, hs):
        end = _segment_end(f, x, period, p, hs, count)
        return end, end

    jac = jax.jacfwd(flow, argnums=(0, 1, 2), has_aux=True)
    (a, b, c), ends = jax.vmap(jac, (0, None, None, 0))(xs, period, p, mesh)
    return xs, ends, a, b, c


def _jacobian(a, b, c, direction):
    """``d [phi(x_i) - x_{i+1}; (x_0 - r) . d] / du``: (m n + 1, m n + 2)."""
    m, n = a.shape[:2]
    shift = jnp.kron(jnp.roll(jnp.eye(m), 1, axis=1), jnp.eye(n))
    top = jnp.concatenate([block_diag(*a) - shift, b.reshape(-1, 1), c.reshape(-1, 1)], axis=1)
    phase = jnp.concatenate([direction, jnp.zeros(m * n - n + 2)])
    return jnp.concatenate([top, phase[None]])


def _velocity(f, u, m):
    """The unit direction of the flow at ``x_0``."""
    xs, _, p = _unpack(u, m)
    v = f(xs[0], p)
    return v / jnp.linalg.norm(v)


@eqx.filter_jit
def correct(model, param, t, u0, c, ds, guess, ref, direction, orient, weights, mesh, count,
            tol, max_steps):
    """Newton on ``[phi(x_i) - x_{i+1}; (x_0 - ref) . direction; c . (u - u0) - ds]``
    from ``guess``, each segment the first ``count`` steps of its row of ``mesh`` (both
    traced: refining the mesh within its length compiles nothing). Returns ``(u, tangent,
    ok, newton steps, segment Jacobians (m, n, n), flow direction, relative error of the
    period)``; the unit tangent (in the ``weights`` norm) is oriented along ``orient``."""
    f, m = _field(model, param, t), mesh.shape[0]

    def system(u):
        xs, ends, a, b, cp = _blocks(f, u, mesh, count)
        r = jnp.concatenate([(ends - jnp.roll(xs, -1, axis=0)).ravel(),
                             ((xs[0] - ref) @ direction)[None], (c @ (u - u0) - ds)[None]])
        return r, jnp.concatenate([_jacobian(a, b, cp, direction), c[None]])

    def body(state):
        u, i, _ = state
        r, jac = system(u)
        du = jnp.linalg.solve(jac, r)
        u = u - du
        return u, i + 1, jnp.linalg.norm(du) <= tol * (1.0 + jnp.linalg.norm(u))

    def going(state):
        u, i, done = state
        return (i < max_steps) & ~done & jnp.all(jnp.isfinite(u))

    u, steps, done = jax.lax.while_loop(going, body, (guess, 0, jnp.array(False)))
    xs, ends, a, b, cp = _blocks(f, u, mesh, count)
    flow = _velocity(f, u, m)
    last = jnp.zeros_like(u).at[-1].set(1.0)
    jac = _jacobian(a, b, cp, flow)
    w = jnp.linalg.solve(jnp.concatenate([jac, (weights * orient)[None]]), last)
    w = w / jnp.sqrt(w @ (weights * w))
    ok = done & jnp.all(jnp.isfinite(u)) & jnp.all(jnp.isfinite(w)) & jnp.all(jnp.isfinite(a))
    return u, w, ok, steps, a, flow, _period_error(f, u, xs, ends, jac, mesh, count)


def _period_error(f, u, xs, ends, jac, mesh, count=None):
    """The relative error of the period, estimated by Richardson: one Newton step (with
    this mesh's Jacobian, the parameter held) towards the orbit on the mesh of half steps
    moves the period by ``dT``; RK4's error being ``O(h^4)``, this mesh's error is
    ``16/15 dT``."""
    period, p = u[-2], u[-1]
    fine, fine_count = jnp.repeat(mesh / 2, 2, axis=1), None if count is None else 2 * count
    fine_ends = jax.vmap(lambda x, hs: _segment_end(f, x, period, p, hs, fine_count))(xs, fine)
    held = jnp.concatenate([jac, jnp.zeros_like(u).at[-1].set(1.0)[None]])
    du = jnp.linalg.solve(held, jnp.concatenate([(ends - fine_ends).ravel(), jnp.zeros(2)]))
    return jnp.abs(du[-2]) * (16.0 / 15.0) / period


@eqx.filter_jit
def period_error(model, param, t, u, mesh):
    """The relative error of the period of the orbit ``u`` on ``mesh`` (see
    ``_period_error``), the phase condition normal to the flow at ``x_0``."""
    f = _field(model, param, t)
    xs, ends, a, b, c = _blocks(f, u, mesh)
    jac = _jacobian(a, b, c, _velocity(f, u, mesh.shape[0]))
    return _period_error(f, u, xs, ends, jac, mesh)


@eqx.filter_jit
def orbit_path(model, param, t, x, period, p, hs):
    """The RK4 path ``(len(hs) + 1, n)`` from ``x`` with steps ``hs`` (summing to one
    period), ``x`` first."""
    path = _segment(_field(model, param, t), x, period, p, hs)[1]
    return jnp.concatenate([x[None], path])


@eqx.filter_jit
def profile(model, param, t, u, mesh):
    """The path ``(m k + 1, n)`` through the shooting points of ``u`` (each segment
    started at its own point), ``x_0`` first."""
    f = _field(model, param, t)
    xs, period, p = _unpack(u, mesh.shape[0])
    paths = jax.vmap(lambda x, hs: _segment(f, x, period, p, hs)[1])(xs, mesh)
    return jnp.concatenate([xs[:1], paths.reshape(-1, xs.shape[1])])


@eqx.filter_jit
def speeds(model, param, t, u, m):
    """``f(x_i)`` at each shooting point of ``u``, ``(m, n)``."""
    f = _field(model, param, t)
    xs, _, p = _unpack(u, m)
    return jax.vmap(lambda x: f(x, p))(xs)
