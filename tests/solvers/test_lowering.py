"""Every program DiffLab compiles lowers for GPUs and TPUs from this CPU machine.

A program that holds a host callback (``equinox.error_if``) lowers only for the backend
that traces it, so these lowerings fail on any check left in: ``jax.jit(f).trace(...)``
once, then ``.lower(lowering_platforms=(p,))`` for ``cuda`` and ``tpu`` (no compilation).
The sweep's layout is chosen by backend, and the GPU's layout and the Pallas kernel give
the CPU's results.
"""

import functools
import importlib
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import get
from difflab.solvers import SweepJob, _sharding
from difflab.solvers._fits import run as fit_run
from difflab.solvers._sweeps import kernel as sweep_kernel
from difflab.solvers._sweeps.job import Layout

fits = importlib.import_module("difflab.solvers._fits.fit")  # the module, not fit()
fit_setup = importlib.import_module("difflab.solvers._fits.setup")
PLATFORMS = ("cuda", "tpu")
FIXED = ("euler", "heun", "rk4", "leapfrog", "euler_maruyama")
ADAPTIVE = ("tsit5", "dopri5", "dopri8", "bosh3", "ralston", "kvaerno3", "kvaerno4",
            "kvaerno5")
DIFFERENTIATED = ("rk4", "leapfrog", "euler_maruyama", "tsit5",
                  pytest.param("kvaerno5", marks=pytest.mark.slow))


def lowers_everywhere(fn, *args):
    """Trace ``jax.jit(fn)`` once and lower it for every platform in ``PLATFORMS``."""
    traced = jax.jit(fn).trace(*args)
    for platform in PLATFORMS:
        text = traced.lower(lowering_platforms=(platform,)).as_text()
        assert "callback" not in text, platform


def case(solver):
    """A model the solver can run, and the extra arguments it needs."""
    if solver == "leapfrog":
        return get("pendulum")(), {}
    if solver == "euler_maruyama":
        return get("ornstein_uhlenbeck")(), {"key": jax.random.key(0)}
    if solver.startswith("kvaerno"):
        return get("van_der_pol")(), {}
    return get("lorenz")(), {}


def run_sum(solver, adjoint="auto", **extra):
    model, kwargs = case(solver)

    def f(t1, model):
        return dl.simulate(model, t1, solver=solver, n_save=11, adjoint=adjoint,
                           **kwargs, **extra).ys.sum()

    return f, model


@pytest.mark.parametrize("solver", FIXED + ADAPTIVE)
def test_simulate_lowers_under_jit_with_throw(solver):
    f, model = run_sum(solver)
    lowers_everywhere(f, 1.0, model)


@pytest.mark.parametrize("adjoint", ["forward", "reverse"])
@pytest.mark.parametrize("solver", DIFFERENTIATED)
def test_gradient_lowers(solver, adjoint):
    f, model = run_sum(solver, adjoint)
    lowers_everywhere(jax.grad(f, argnums=1), 1.0, model)


@pytest.mark.parametrize("solver", ["rk4", "tsit5"])
def test_simulate_with_events_lowers(solver):
    f, model = run_sum(solver, events=dl.Event("x", terminal=True))
    lowers_everywhere(f, 1.0, model)
    lowers_everywhere(jax.grad(f, argnums=1), 1.0, model)


def test_failure_under_jit_still_raises_on_the_cpu():
    model = get("lorenz")()

    @jax.jit
    def run(t1):
        return dl.simulate(model, t1, solver="tsit5", n_save=3, max_steps=4).ys

    with pytest.raises(Exception, match="max_steps"):
        jax.block_until_ready(run(10.0))


def sweep_program(job):
    """The program a sweep runs per chunk, and the arguments of its first chunk."""
    fn = _sharding.map_batch(functools.partial(sweep_kernel.device_rows, job.kernel),
                             job.mesh, replicated=(0,))
    return fn, job.base, job._put(0)


@pytest.mark.parametrize("solver, layout", [("rk4", "blocks"), ("rk4", "whole"),
                                            ("tsit5", "whole"), ("tsit5", "blocks")])
def test_sweep_program_lowers(solver, layout):
    model = get("lorenz")()
    job = SweepJob(model, {"rho": np.linspace(20, 30, 40)}, 1.0, solver=solver, n_save=5,
                   layout=layout, observables={"peak": "max(x)"})
    lowers_everywhere(*sweep_program(job))


@pytest.mark.parametrize("layout", ["blocks", "whole"])
def test_stiff_sweep_program_lowers(layout):
    job = SweepJob(get("van_der_pol")(), {"mu": np.linspace(1.0, 5.0, 16)}, 10.0,
                   solver="kvaerno5", n_save=5, layout=layout, observables={"peak": "max(x)"})
    lowers_everywhere(*sweep_program(job))


@pytest.mark.parametrize("method", ["lm", pytest.param("bfgs", marks=pytest.mark.slow),
                                    "adam"])
def test_fit_program_lowers(method):
    model = get("lotka_volterra")()
    data = dl.simulate(model, 2.0, n_save=21)
    optimizer = fits.resolve_method(method)
    arguments = fits.solve_arguments(None, fits.FIT_DEFAULTS, t0=None, t1=2.0, dt=None,
                                     solver="tsit5", n_save=None, y0=None, rtol=None,
                                     atol=None, max_steps=None)
    problem, scales, args, _, _ = fit_setup.setup(model, fits.as_observations(data), None,
                                                  arguments, bounds=None, log_scale=None,
                                                  sigma=None)
    args["optimizer"] = {k: jnp.asarray(v, float) for k, v in
                         {"rtol": 1e-8, "atol": 1e-8, "learning_rate": 1e-2}.items()}
    rows = fits.start_points(problem.names, scales, model, 2, 0)
    u = {"scalars": jnp.asarray(rows), "free": {}}
    state = fit_run._init(optimizer, problem, u, args)
    status = {"done": jnp.zeros(2, bool), "code": jnp.zeros(2, jnp.int32),
              "best": jnp.full(2, jnp.inf), "mark": jnp.full(2, jnp.inf),
              "since": jnp.zeros(2, jnp.int32)}

    def chunk(u, state, status):
        return fit_run._chunk(optimizer, problem, 16, u, state, status,
                              jnp.asarray(4, jnp.int32), jnp.asarray(jnp.inf), args)

    lowers_everywhere(chunk, u, state, status)


# -- the sweep's layout, by backend ----------------------------------------------------


@pytest.mark.parametrize("platform, layout", [("cpu", "blocks"), ("gpu", "whole"),
                                              ("cuda", "whole"), ("rocm", "whole"),
                                              ("tpu", "whole")])
def test_layout_follows_the_platform(platform, layout):
    assert sweep_kernel.device_layout(platform) == layout
    assert sweep_kernel.resolve_layout(None, platform) == layout


def test_layout_refuses_unknown_names():
    with pytest.raises(ValueError, match="unknown platform 'metal'"):
        sweep_kernel.device_layout("metal")
    with pytest.raises(ValueError, match="layout must be 'blocks' or 'whole'"):
        sweep_kernel.resolve_layout("rows", "cpu")


def test_device_budget_is_half_a_reported_memory():
    gpu = types.SimpleNamespace(memory_stats=lambda: {"bytes_limit": 80 * 2**30})
    cpu = types.SimpleNamespace(memory_stats=lambda: None)
    assert sweep_kernel.device_budget(gpu, 512) == 40 * 2**30
    assert sweep_kernel.device_budget(cpu, 512) == 512


def test_whole_layout_is_one_block_per_device_filling_the_budget():
    mesh = _sharding.batch_mesh(jax.devices()[:1])
    whole = Layout.make(10_000, mesh, chunk_size=None, block_size=None, point_bytes=100,
                        memory_budget=400_000)
    assert (whole.chunk_size, whole.block, whole.device_rows) == (2000, 2000, 2000)
    blocks = Layout.make(10_000, mesh, chunk_size=None, block_size=256, point_bytes=100,
                         memory_budget=400_000)
    assert blocks.block == 256 and blocks.device_rows % 256 == 0


def lorenz_sweep(**options):
    space = {"rho": np.linspace(10.0, 40.0, 300), "sigma": np.linspace(8.0, 12.0, 300)}
    return dl.sweep(get("lorenz")(), space, 1.0, solver="rk4", dt=0.01, n_save=11,
                    **options)


def test_whole_layout_gives_the_blocks_results_on_the_cpu():
    blocks, whole = lorenz_sweep(block_size=32), lorenz_sweep(layout="whole")
    np.testing.assert_array_equal(np.asarray(whole.ys), np.asarray(blocks.ys))
    np.testing.assert_array_equal(np.asarray(whole.result), np.asarray(blocks.result))


def test_pallas_kernel_gives_the_xla_sweep():
    xla, pallas = lorenz_sweep(kernel="xla"), lorenz_sweep(kernel="pallas")
    np.testing.assert_allclose(np.asarray(pallas.ys), np.asarray(xla.ys), rtol=0,
                               atol=1e-12)
    assert lorenz_sweep(kernel="auto").ys.shape == xla.ys.shape


def test_kernel_choice_is_checked():
    space = {"rho": np.linspace(20.0, 30.0, 4)}
    with pytest.raises(ValueError, match="kernel must be 'auto', 'xla' or 'pallas'"):
        dl.sweep(get("lorenz")(), space, 1.0, kernel="triton")
    with pytest.raises(ValueError, match="kernel='pallas' cannot step Lorenz"):
        dl.sweep(get("lorenz")(), space, 1.0, solver="tsit5", kernel="pallas")
