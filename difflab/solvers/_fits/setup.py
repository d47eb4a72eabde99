"""Setting a fit up: the fitted parameters' scales, the observed states, the simulation's
settings (checked against the observations and the step limit) and the noise levels."""

import math
from collections.abc import Mapping

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._auto_step import auto_step
from .._resources import check_fixed_steps
from .._simulate import DEFAULT_N_SAVE
from .._steppers.catalog import resolve_solver
from .observations import Observations, sigma_array
from .problem import Problem, make_scale, split_params


def setup(model, obs, params, solve, *, bounds, log_scale, sigma):
    scalars, arrays = split_params(model, params)
    scales = tuple(_scale(model, n, bounds, log_scale) for n in scalars)
    for name in bounds or {}:
        if name not in scalars:
            raise ValueError(f"bounds name {name!r}, which is not a fitted scalar parameter")
    index = tuple(model.state_index(s) if s in model.state_names else _unknown_state(model, s)
                  for s in obs.states)
    settings = _span(obs, solve, model)
    static = {k: settings[k] for k in ("solver", "n_save", "max_steps") if k in settings}
    problem = Problem(scalars, tuple(s.kind for s in scales), arrays,
                      eqx.partition(model, eqx.is_array)[1], index, tuple(sorted(static.items())))
    sd, absolute = _noise(obs, sigma)
    f = jnp.result_type(float)
    traced = {k: None if settings.get(k) is None else jnp.asarray(settings[k], f)
              for k in ("t0", "t1", "dt", "y0", "rtol", "atol")}
    args = {"model": eqx.partition(model, eqx.is_array)[0], **traced,
            "t_obs": jnp.asarray(obs.t, f), "y_obs": jnp.asarray(np.nan_to_num(obs.y), f),
            "mask": jnp.asarray(np.isfinite(obs.y)), "weight": jnp.asarray(1.0 / sd, f),
            "bounds": jnp.asarray([[s.lo, s.hi] for s in scales], f).reshape(-1, 2)}
    return problem, scales, args, settings, absolute


def _span(obs, solve, model) -> dict:
    """The simulation's settings, checked against the observed times (``None`` left out)."""
    t0 = float(solve["t0"])
    t1 = float(obs.t.max() if solve["t1"] is None else solve["t1"])
    if not t1 > t0 or obs.t.min() < t0 or obs.t.max() > t1:
        raise ValueError(f"the observations span [{obs.t.min():g}, {obs.t.max():g}], which "
                         f"must lie within (t0, t1] = ({t0:g}, {t1:g}]")
    n_save, dt = solve["n_save"], solve["dt"]
    if dt is None:  # the automatic step (docs/solvers.md), chosen on the starting model
        dt = auto_step(model, t1, t0=t0, solver=solve["solver"], y0=solve["y0"],
                       rtol=solve["rtol"], n_save=2).dt
    fixed = not resolve_solver(solve["solver"], model).adaptive
    if fixed and dt is not None:  # each simulation of the fit takes these steps
        check_fixed_steps(t0, t1, float(dt), solve["max_steps"], n_save)
    if n_save is None and dt is not None and fixed:
        n_save = min(DEFAULT_N_SAVE, math.ceil((t1 - t0) / float(dt) * (1 - 1e-12)) + 1)
    settings = {**solve, "t0": t0, "t1": t1, "dt": dt, "n_save": n_save}
    settings.pop("key", None)
    return {k: v for k, v in settings.items() if v is not None}


def _unknown_state(model, state):
    raise ValueError(f"the data observe {state!r}, which is not a state of "
                     f"{type(model).__name__} ({', '.join(model.state_names)})")


def _scale(model, name, bounds, log_scale):
    spec = model.parameter_specs()[name]
    chosen = bounds[name] if bounds and name in bounds else spec.bounds
    if isinstance(log_scale, Mapping):
        log = log_scale.get(name)
    elif isinstance(log_scale, (list, tuple, set)):
        log = name in log_scale
    else:
        log = log_scale
    return make_scale(name, float(getattr(model, name)), chosen, log)


def _noise(obs: Observations, sigma):
    if sigma is not None:
        return sigma_array(sigma, obs.y.shape, obs.states), True
    if obs.sigma is not None:
        sd = obs.sigma
        if np.any(np.isfinite(obs.y) & ~np.isfinite(sd)):
            raise ValueError("the data's sigma is missing for some observed values")
        return np.where(np.isfinite(sd), sd, 1.0), True
    return np.ones(obs.y.shape), False
