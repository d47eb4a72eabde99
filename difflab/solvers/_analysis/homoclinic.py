"""Homoclinic orbits continued in two parameters by the large-period approximation.

A cycle of large period ``T_0`` near a homoclinic orbit spends nearly all of it by the
saddle; held at that period while both parameters move (``cycle_system``), it follows
the homoclinic curve to within ``exp(-lambda T_0)`` (``lambda`` the saddle's leading
rate), as AUTO's and MatCont's large-period continuation does. The branch of cycles that
ends at a homoclinic orbit (``periodic_orbits``, status ``"period grows without bound:
homoclinic orbit near ..."``) gives the first orbit: its longest.
"""

import numpy as np

from .cycle_curves import CycleCurve, cycle_curve, orbit_unknowns, uniform_mesh
from .saddles import saddle_near
from .sources import model_of
from .traced import untraced


def _orbit(model, param, start) -> tuple[np.ndarray, float, float, int | None]:
    """``(state, period, value, steps)`` of the orbit to start from."""
    if hasattr(start, "periods") and hasattr(start, "param"):
        if start.param != param:
            raise ValueError(f"the branch of cycles is in {start.param!r}; the homoclinic "
                             f"curve's first parameter is {param!r}")
        i = int(np.argmax(start.periods))
        return (np.asarray(start.states[i], float), float(start.periods[i]),
                float(start.values[i]), int(start.steps))
    try:
        state, period = start
        period = float(period)
    except (TypeError, ValueError):
        raise ValueError("start must be a PeriodicOrbits branch that ends at a homoclinic "
                         "orbit or a pair (state, period) of a long-period orbit") from None
    state = np.asarray(state, float)
    if state.shape != np.asarray(model.initial_state()).shape or not period > 0:
        raise ValueError(f"start needs a state of shape {np.shape(model.initial_state())} "
                         f"and a positive period, got {state.shape} and {period}")
    return state, period, float(getattr(model, param)), None


def homoclinic(model, params, start, lo: float, hi: float, *, t: float = 0.0,
               segments: int = 16, steps: int | None = None, ds: float | None = None,
               ds_min: float | None = None, ds_max: float | None = None,
               max_points: int = 1000, tol: float = 1e-10,
               max_newton: int = 12) -> CycleCurve:
    """The curve of orbits homoclinic to a saddle in ``params = (p, q)``, by a cycle of
    fixed large period, both ways until ``q`` leaves ``[lo, hi]``.

    ``start``: a :class:`PeriodicOrbits` branch in ``p`` that ended at a homoclinic
    orbit (its longest orbit starts the curve; run it with ``max_period`` for a longer
    one) or a pair ``(state, period)``, a state on a long-period orbit at the model's
    own parameter values. The orbit is held at that period on ``segments`` shooting
    segments of about ``steps / segments`` RK4 steps (default: the branch's steps, else
    400); arclength steps ``ds`` (default ``(hi - lo) / 100``) adapt between ``ds_min``
    and ``ds_max``. Gives a :class:`CycleCurve` of kind ``"homoclinic"`` with the saddle
    and its eigenvalues at each point, and the estimated relative error of the period
    of each orbit at its parameters (``errors``). ``model`` may also be an analysis
    result."""
    model = model_of(model)
    untraced("homoclinic", model, lo, hi)
    lo, hi, params = float(lo), float(hi), tuple(params)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"a homoclinic curve needs finite lo < hi, got {lo} and {hi}")
    if len(params) != 2:
        raise ValueError(f"a homoclinic curve needs two parameters, got {params}")
    state, period, value, branch_steps = _orbit(model, params[0], start)
    steps = int(steps or branch_steps or 400)
    if not 1 <= segments <= steps:
        raise ValueError(f"need 1 <= segments <= steps, got {segments} and {steps}")
    mesh = uniform_mesh(int(segments), steps)
    at = model.replace(**{params[0]: value})
    u = orbit_unknowns(at, params[0], state, period, value, mesh, t)
    path = u[:-2].reshape(int(segments), -1)
    if saddle_near(at, path, t) is None:
        raise ValueError(f"the orbit at {params[0]}={value:g} passes no saddle: it is not "
                         f"near a homoclinic orbit")
    span = hi - lo
    sizes = (span / 100 if ds is None else float(ds), span * 1e-9 if ds_min is None
             else float(ds_min), span / 25 if ds_max is None else float(ds_max))
    return cycle_curve(at, params, "homoclinic", u, mesh, lo, hi, t=t, sizes=sizes,
                       max_points=max_points, tol=tol, max_newton=max_newton)
