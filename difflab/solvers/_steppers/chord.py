"""The Newton (chord) iteration of the implicit solvers' stages, as RADAU5 stops it.

diffrax 0.7.2's ``VeryChord`` gets two things wrong, and together they made ``kvaerno5``
stall on the Oregonator at ``rtol = 1e-9`` (200,000 steps, 40 % rejected, the step size
down to 1e-7 near t = 24; every rejection a failed stage, never the error estimate):

- it stops every stage after its second iteration, reporting ``nonlinear_divergence``
  unless that iteration already passed the convergence test, so a contracting stage that
  needs a third iteration rejects the step and cuts the step size five-fold;
- it measures each correction of the stage *derivative* ``f_i`` against the state's
  tolerances, ``atol + rtol |f_i|``. The state moves by ``h a_ii`` times that correction,
  so at tight tolerances the rounding noise of ``f`` alone fails the test (van der Pol at
  ``rtol = 1e-10``: corrections stuck at 5 tolerances, with ``h = 6e-8``).

:class:`StageChord` iterates while the corrections contract and measures them as the
state's corrections ``h a_ii df_i`` against ``atol + rtol |y_i|`` (Hairer & Wanner,
*Solving ODEs II*, IV.8): it stops on ``theta / (1 - theta) |dy| <= kappa`` and fails
when the rate ``theta`` passes diffrax's divergence bound, or when at that rate the
iterations left cannot reach ``kappa`` (so a failed stage costs little).
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

_VeryChord = diffrax.VeryChord


class StageChord(_VeryChord):
    """diffrax's ``VeryChord`` (one Jacobian per step) with the test and measure above.

    ``max_steps``: the stage's iteration limit, used to give up early on a slow rate (the
    solver's ``root_find_max_steps``, 10 for diffrax's implicit solvers).
    """

    max_steps: int = eqx.field(static=True, default=10)

    def step(self, fn, y, args, options, state, tags):
        new_y, new_state, aux = super().step(fn, y, args, options, state, tags)
        size = self._state_size(new_state.diff, new_y, args)
        if size is not None:
            new_state = eqx.tree_at(lambda s: s.diffsize, new_state, size)
        return new_y, new_state, aux

    def _state_size(self, diff, unknown, args):
        """The scaled size of the state's correction, for diffrax's stage equations in
        ``f`` (8 arguments) or in ``k = h f`` (7); ``None`` for any other equation."""
        if not isinstance(args, tuple) or len(args) not in (7, 8):
            return None
        if len(args) == 8:  # (stage, a_ii, vf, prod, t_i, partial y_i, args, control)
            _, diagonal, _, prod, _, partial, _, control = args
            to_state = lambda v: prod(v, control)  # noqa: E731
        else:  # (stage, a_ii, vf_prod, t_i, partial y_i, args, control)
            _, diagonal, _, _, partial, _, _ = args
            to_state = lambda v: v  # noqa: E731
        dy = jax.tree.map(lambda v: diagonal * v, to_state(diff))
        y_i = jax.tree.map(lambda p, v: p + diagonal * v, partial, to_state(unknown))
        scaled = jax.tree.map(lambda d, v: d / (self.atol + self.rtol * jnp.abs(v)), dy, y_i)
        return self.norm(scaled)

    def terminate(self, fn, y, args, options, state, tags):
        del fn, y, args, options, tags
        at_least_two = state.step >= 2
        rate = state.diffsize / state.diffsize_prev
        small = state.diffsize < 10 ** (2 - jnp.finfo(state.diffsize.dtype).precision)
        converged = (rate < 1) & (state.diffsize * rate / (1 - rate) < self.kappa)
        left = jnp.maximum(self.max_steps - state.step, 0)
        hopeless = (~jnp.isfinite(rate) | (rate > 2)
                    | ((rate < 1) & (rate**left / (1 - rate) * state.diffsize > self.kappa)))
        ok = small | converged
        failed = at_least_two & ~ok & hopeless
        result = optx.RESULTS.where(failed, optx.RESULTS.nonlinear_divergence,
                                    optx.RESULTS.successful)
        linsolve_fail = state.result != optx.RESULTS.successful
        result = optx.RESULTS.where(linsolve_fail, state.result, result)
        return linsolve_fail | (at_least_two & (ok | failed)), result


def with_stage_chord(solver):
    """``solver`` with diffrax's stock ``VeryChord`` replaced by :class:`StageChord` (same
    tolerances, ``kappa`` and linear solver); any other solver or root finder as it is."""
    if not isinstance(solver, diffrax.AbstractImplicitSolver):
        return solver
    finder = solver.root_finder
    if type(finder) is not _VeryChord:
        return solver
    chord = StageChord(rtol=jnp.inf, atol=jnp.inf, kappa=finder.kappa,
                       linear_solver=finder.linear_solver, max_steps=solver.root_find_max_steps)
    tols = lambda f: (f.rtol, f.atol, f.norm)  # numbers, or "the controller's" # noqa: E731
    chord = eqx.tree_at(tols, chord, tols(finder))
    return eqx.tree_at(lambda s: s.root_finder, solver, chord)
