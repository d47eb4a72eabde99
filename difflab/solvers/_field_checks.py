"""What a field run checks before and after it runs: memory, a stable step, solver names,
and where a field first stopped being finite."""

import math
import weakref

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from ..models import AbstractFieldModel, Grid, initial_fields_of
from ._resources import MIN_MEMORY_LIMIT, check_memory
from ._result import Result, SimulationError
from ._steppers import ETD_SOLVERS
from ._steppers.catalog import EXPLICIT, IMPLICIT
from ._steppers.field_steppers import FIELD_EXPLICIT, stable_dt
from ._steppers.imex import FIELD_IMPLICIT, IMEX_SOLVERS, AbstractFieldDIRK

#: copies of the state a run holds besides its frames: the start, the stages and their
#: nonlinear parts, the stepper's weights (in Fourier space, about half a field each)
WORKING_COPIES = 24

FIELD_SOLVERS = (*ETD_SOLVERS, *FIELD_EXPLICIT, *FIELD_IMPLICIT, *EXPLICIT)

#: Arnoldi steps of the stability estimate of a model known by its vector field alone,
#: and the margin on the eigenvalues found: they approach the extreme ones from inside
#: (on a walled 64x96 grid, 20 steps found 0.27% less than the largest)
KRYLOV_STEPS = 20
RITZ_MARGIN = 1.05


def check_memory_of(model: AbstractFieldModel, frames: int) -> None:
    """Refuse, before anything is made, a run whose frames and working copies would not fit
    (``frames`` kept on the device and copied to the host)."""
    cells = math.prod(model.grid.shape) * len(model.field_names)  # exact, however big
    need = 8.0 * cells * (2 * frames + WORKING_COPIES)
    if need <= MIN_MEMORY_LIMIT:
        return  # below any limit: the message is not worth composing on every run
    check_memory(need, f"a field run on a {model.grid.size_text} grid with {frames} "
                 f"frames of {len(model.field_names)} field(s)",
                 "use fewer points or frames", device_need=8.0 * cells * (frames + WORKING_COPIES))


def check_solver(name: str, model: AbstractFieldModel) -> None:
    """Refuse a solver name that cannot advance ``model``, saying what can."""
    if name in IMPLICIT:
        raise ValueError(f"{name} would form a dense Jacobian of all the fields' values: "
                         f"use the matrix-free implicit_euler, sdirk2 or imex2 (or etdrk4)")
    if name in IMEX_SOLVERS and not model.has_linear_operator():
        raise ValueError(f"{name} takes the linear operator implicitly, and "
                         f"{type(model).__name__} defines none: use sdirk2")
    if name not in FIELD_SOLVERS:
        raise ValueError(f"field models are advanced by {', '.join(FIELD_SOLVERS)}, not "
                         f"{name!r}")
    if name in ETD_SOLVERS and model.linear_part() is None:
        raise ValueError(f"{name} needs a linear part diagonal in Fourier space (a periodic "
                         f"grid); {type(model).__name__} has none: use rk4 or tsit5")


def _concrete(tree) -> bool:
    return not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(tree))


def stable_step(name: str, model: AbstractFieldModel) -> float:
    """The largest stable step of explicit ``name`` for the model's linear part, or where
    it has none, for the extreme modes of its vector field at the initial fields (``inf``:
    not limited, or not known: traced parameters)."""
    if name not in FIELD_EXPLICIT:
        return float("inf")
    eigenvalues = model.linear_eigenvalues()
    if eigenvalues is None:
        eigenvalues = _ritz_values(model)
    if eigenvalues is None or not _concrete(eigenvalues):
        return float("inf")
    return stable_dt(FIELD_EXPLICIT[name], eigenvalues)


def _ritz_values(model: AbstractFieldModel) -> list | None:
    """Estimates of the extreme eigenvalues of the vector field's Jacobian at the initial
    fields, as a list of one array of modes; ``None`` where they cannot be had (traced
    parameters, a vector field JAX cannot differentiate)."""
    if not _concrete(model):
        return None
    for ref, values in _LAST_RITZ:
        if ref() is model:  # a run asks three times: its default step, its plan, its start
            return values
    as_arrays = jax.tree.map(lambda x: jnp.asarray(x) if type(x) is float else x, model)
    try:  # parameters as arrays: one compiled estimate for every point of a sweep
        values = [RITZ_MARGIN * np.linalg.eigvals(np.asarray(_arnoldi(as_arrays)))]
    except (TypeError, ValueError, NotImplementedError):
        values = None
    _LAST_RITZ[:] = [(weakref.ref(model), values)]
    return values


_LAST_RITZ: list = []  # [(a weak reference to the last model, its Ritz values)]


@eqx.filter_jit
def _arnoldi(model: AbstractFieldModel):
    """The Hessenberg matrix of ``KRYLOV_STEPS`` Arnoldi steps on the vector field's
    Jacobian at the initial fields (Jacobian-vector products; Gram-Schmidt twice), from
    a random start, which touches every mode. Its eigenvalues (Ritz values) approach the
    Jacobian's extreme ones first: the most negative of a diffusion, the largest
    imaginary pair of a wave."""
    flat, unravel = ravel_pytree(initial_fields_of(model))
    flat = flat.astype(jnp.result_type(float))
    _, jvp = jax.linearize(lambda u: ravel_pytree(model.vector_field(0.0, unravel(u)))[0],
                           flat)
    m = min(KRYLOV_STEPS, flat.size)
    start = jax.random.normal(jax.random.key(0), flat.shape, flat.dtype)
    basis = jnp.zeros((m + 1, flat.size), flat.dtype).at[0].set(start / jnp.linalg.norm(start))

    def step(carry, k):
        basis, h = carry
        w = jvp(basis[k])
        for _ in range(2):  # rows past k are zero and take nothing away
            c = basis @ w
            w, h = w - c @ basis, h.at[:, k].add(c)
        norm = jnp.linalg.norm(w)
        ended = norm <= 1e-12 * jnp.max(jnp.abs(h[:, k]))  # an invariant subspace
        basis = basis.at[k + 1].set(jnp.where(ended, 0.0, w / jnp.where(ended, 1.0, norm)))
        return (basis, h.at[k + 1, k].set(jnp.where(ended, 0.0, norm))), None

    (_, h), _ = jax.lax.scan(step, (basis, jnp.zeros((m + 1, m), flat.dtype)),
                             jnp.arange(m))
    return h[:m]


def check_stable(name: str, model: AbstractFieldModel, dt: float) -> None:
    """Refuse an explicit step past the stability limit of :func:`stable_step`, naming one
    that is stable."""
    limit = stable_step(name, model)
    if dt <= limit:
        return
    where = f"on this {model.grid.size_text} grid"
    other = ("etdrk4" if model.linear_part() is not None
             else "imex2" if model.has_linear_operator() else "sdirk2")
    if limit == 0.0:
        rk4 = stable_step("rk4", model)  # its region holds a stretch of the imaginary axis
        explicit = f"rk4 with dt <= {0.9 * rk4:.3g}, or " if 0 < rk4 < float("inf") else ""
        raise ValueError(f"{name} amplifies the oscillating modes of {type(model).__name__} "
                         f"at any step: use {explicit}{other}")
    raise ValueError(f"dt = {dt:.4g} is unstable for {name} {where}: its fastest mode "
                     f"needs dt <= {limit:.4g}; use dt = {0.9 * limit:.3g} or solver="
                     f"'{other}'")


def _first_nonfinite(ts, fields: dict, grid: Grid) -> tuple[int, str] | None:
    """``(frame, where)`` of a field's first non-finite value, or ``None``."""
    found = None
    for name, u in fields.items():
        bad = ~np.isfinite(np.asarray(u))
        if bad.any():
            frame = int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))
            if found is None or frame < found[0]:
                index = np.unravel_index(np.argmax(bad[frame]), bad.shape[1:])
                found = (frame, _describe(name, float(ts[frame]), index[-grid.ndim:], grid))
    return found


def _describe(name: str, t: float, index, grid: Grid) -> str:
    point = ", ".join(f"{axis} = {grid.axis_coordinates(i)[k]:.4g}"
                      for i, (axis, k) in enumerate(zip(grid.axis_names, index, strict=True)))
    cell = ", ".join(str(int(k)) for k in index)
    return f"field {name!r} is not finite at t = {t:.6g}, first at {point} (point [{cell}])"


_DIVERGED = "the run diverged; a smaller dt or finer grid may keep it finite"
_IMPLICIT_DIVERGED = ("the run diverged, or a stage's Newton-Krylov solve did not converge "
                      "(such a stage gives NaN fields); a smaller dt may keep it finite")


#: what a field run's solver failure says where the ODE message would not fit
_FIELD_FAILURES = {
    Result.MAX_STEPS_REACHED: "the solver took max_steps steps before reaching t1; raise "
    "max_steps or loosen rtol/atol, or, where the fields are stiff, take fixed steps with "
    "etdrk4, imex2 or sdirk2",
}


def why_not_finite(solver) -> str:
    """What a frame that is not finite says of a run by ``solver`` (a name or a stepper)."""
    implicit = solver in FIELD_IMPLICIT if isinstance(solver, str) \
        else isinstance(solver, AbstractFieldDIRK)
    return _IMPLICIT_DIVERGED if implicit else _DIVERGED


def outcome(ts, out: dict, grid: Grid, throw: bool, code=Result.SUCCESS,
            finite=None, why: str = _DIVERGED) -> Result:
    """``DIVERGED`` where a frame holds a NaN or infinity (raised if ``throw``, saying
    where and ``why``), checked on the host once the run is done; under a JAX
    transformation the values are not known. ``code``: the solver's own outcome (an
    adaptive run's), which comes first (raised if ``throw``): the frames after a solver
    stops are not reached, not diverged. ``finite``: whether every frame is, computed
    with the run (then the frames are searched only when one is not)."""
    if not _concrete((ts, out, finite)):
        return Result.SUCCESS
    code = Result(int(code))
    if code == Result.SUCCESS and finite is not None and bool(finite):
        return code  # the common case, decided as soon as the run is done
    found = None if finite is not None and bool(finite) else _first_nonfinite(ts, out, grid)
    if code != Result.SUCCESS:  # the solver stopped: the frames after it are its fill
        if throw:
            unreached = "" if found is None else \
                f" (the frames from t = {float(ts[found[0]]):.6g} on were not reached)"
            what = _FIELD_FAILURES.get(code, code.message)
            raise SimulationError(f"the field run failed: {what}{unreached}", code)
        return code
    if found is not None:
        if throw:
            raise SimulationError(f"{found[1]}: {why}", Result.DIVERGED)
        return Result.DIVERGED
    return code
