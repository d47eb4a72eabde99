"""The largest Lyapunov exponent as a sweep observable: a chaos map over the parameters.

``"lyapunov(T)"`` (or :func:`largest_lyapunov`) starts from a point's state at the end of
its run, so the sweep's run is the transient, and advances the state and one tangent
vector together for ``T`` more time units (RK4 steps of at most ``dt``, the tangent by
``jax.linearize`` of the point's own model), renormalising the vector every ``every``
steps. The exponent is the accumulated log growth divided by ``T``: positive on a
chaotic attractor, about zero on a limit cycle, negative at a stable equilibrium.
"""

import math

import jax
import jax.numpy as jnp

from .._analysis.lyapunov import _rk4, _tangent
from .._resources import check_step_count
from .spec import SpecObservable, number_text, spec_text

DEFAULT_DT = 0.01
DEFAULT_EVERY = 10


class LargestLyapunov(SpecObservable):
    """The largest Lyapunov exponent after the run (see the module)."""

    def __init__(self, t: float, dt: float = DEFAULT_DT, every: int = DEFAULT_EVERY):
        t, dt = float(t), float(dt)
        for name, value in (("t", t), ("dt", dt)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"lyapunov: {name} must be a positive number, got {value:g}")
        if isinstance(every, bool) or int(every) != every or every < 1:
            raise ValueError(f"lyapunov: every must be a whole number of steps >= 1, got {every!r}")
        check_step_count(t / dt, f"lyapunov({t:g}) in RK4 steps of dt = {dt:g}",
                         "lower its time or raise its dt")
        self.t, self.dt, self.every = t, dt, int(every)

    @property
    def spec(self) -> str:
        return spec_text("lyapunov", number_text(self.t), {
            "dt": None if self.dt == DEFAULT_DT else number_text(self.dt),
            "every": None if self.every == DEFAULT_EVERY else self.every})

    def __call__(self, traj):
        model = traj.model
        if model is None:
            raise ValueError("lyapunov needs the model of the run: a sweep passes it")
        if hasattr(model, "diffusion"):
            raise ValueError("lyapunov: stochastic models have no Lyapunov exponent here")
        blocks = max(1, math.ceil(self.t / (self.dt * self.every)))
        h = self.t / (blocks * self.every)
        tangent = _tangent(model)
        y = traj.ys[-1]
        v = jnp.full((y.shape[0], 1), 1.0 / math.sqrt(y.shape[0]), y.dtype)

        def block(carry, _):
            t, y, v, growth = carry
            t, (y, v) = jax.lax.fori_loop(
                0, self.every, lambda i, c: (c[0] + h, _rk4(tangent, c[0], c[1], h)),
                (t, (y, v)))
            norm = jnp.linalg.norm(v)
            return (t, y, v / norm, growth + jnp.log(norm)), None

        start = (traj.ts[-1], y, v, jnp.zeros((), y.dtype))
        (_, _, _, growth), _ = jax.lax.scan(block, start, None, length=blocks)
        return growth / self.t


def largest_lyapunov(t: float, dt: float = DEFAULT_DT, every: int = DEFAULT_EVERY):
    """The largest Lyapunov exponent as a sweep observable, the same as the spec
    ``"lyapunov(t)"``: ``observables={"lambda1": largest_lyapunov(200)}``.

    From each point's state at the end of its run (the run is the transient), the
    state and a tangent vector advance ``t`` more time units by RK4 steps of at most
    ``dt``, the vector renormalised every ``every`` steps; the result is the mean log
    growth rate (positive: chaotic; about 0: a limit cycle; negative: a stable
    equilibrium).
    """
    return LargestLyapunov(t, dt, every)
