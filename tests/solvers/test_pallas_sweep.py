"""The per-trajectory Pallas kernel (interpret mode on the CPU): equal to ``simulate``
trajectory by trajectory, exact against closed forms, refusing what it cannot run, and
lowering for CUDA (Triton) from a machine without a GPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.solvers import pallas_supported, solve_block_pallas

# white-box: counts traces of the kernel's one-point step (compiled-program reuse)
from difflab.solvers._accelerators import pallas_sweep as _pallas_sweep
from tests.models_for_tests import Noisy, Spring

LORENZ = dl.models.get("lorenz")
T1, N_STEPS = 1.0, 100


def _lorenz_batch(n: int):
    """``n`` trajectories with their own rho, sigma and initial state, as rows."""
    values = {"rho": jnp.linspace(5.0, 35.0, n), "sigma": jnp.linspace(8.0, 12.0, n)}
    y0 = jnp.stack([jnp.linspace(-2.0, 2.0, n), jnp.linspace(1.0, 3.0, n),
                    jnp.linspace(0.5, 25.0, n)])
    return values, y0


def _simulated(model, values, y0, solver, n_save):
    """``simulate`` of each trajectory (vmapped), as (n_save, n_states, B)."""

    def one(vals, y0_i):
        point = model.replace(**vals) if vals else model
        return dl.simulate(point, T1, dt=T1 / N_STEPS, solver=solver, n_save=n_save,
                           y0=y0_i, throw=False).ys

    return np.transpose(np.asarray(jax.vmap(one)(values, y0.T)), (1, 2, 0))


def _kernel(model, values, y0, solver, n_save, **options):
    return np.asarray(solve_block_pallas(model, solver, y0, values, t0=0.0, h=T1 / N_STEPS,
                                         n_steps=N_STEPS, n_intervals=n_save - 1, **options))


@pytest.mark.parametrize("solver, n_save", [("rk4", 11), ("heun", 8), ("euler", 101)])
def test_lorenz_equals_simulate_per_trajectory(solver, n_save):
    """37 trajectories in blocks of 16 (the last block padded); n_save=8 saves unevenly."""
    values, y0 = _lorenz_batch(37)
    ys = _kernel(LORENZ(), values, y0, solver, n_save, block=16)
    expected = _simulated(LORENZ(), values, y0, solver, n_save)
    assert ys.shape == (n_save, 3, 37)
    np.testing.assert_allclose(ys, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ys[0], y0)


def test_rk4_follows_the_closed_form_of_an_undamped_spring():
    """RK4 advances ``y' = A y`` by the matrix ``sum_j (h A)^j / j!, j <= 4`` (its
    stability polynomial) each step: exact to rounding. It tends to the cosine."""
    k = np.array([0.25, 1.0, 4.0, 9.0])
    ys = _kernel(Spring(c=0.0), {"k": jnp.asarray(k)}, jnp.stack([jnp.ones(4), jnp.zeros(4)]),
                 "rk4", 11)
    h = T1 / N_STEPS
    for i, k_i in enumerate(k):
        ha = h * np.array([[0.0, 1.0], [-k_i, 0.0]])
        step = sum(np.linalg.matrix_power(ha, j) / np.prod(np.arange(1, j + 1))
                   for j in range(5))
        exact = [np.linalg.matrix_power(step, 10 * s) @ [1.0, 0.0] for s in range(11)]
        np.testing.assert_allclose(ys[:, :, i], exact, rtol=0, atol=1e-13)
    t = np.linspace(0.0, T1, 11)[:, None]
    np.testing.assert_allclose(ys[:, 0], np.cos(np.sqrt(k) * t), rtol=0, atol=1e-7)


@pytest.mark.parametrize("name, solver, swept", [
    ("pendulum", "leapfrog", "length"),  # jax.grad of the energies: sums, concatenation
    ("duffing", "rk4", "omega"),  # a time-dependent drive
    ("hybrid_oscillator", "heun", "omega"),  # an MLP's matrices: dot products, tanh
])
def test_other_models_equal_simulate(name, solver, swept):
    options = {"width": 4} if name == "hybrid_oscillator" else {}
    model = dl.models.get(name)(**options)
    base = np.asarray(model.initial_state())
    y0 = jnp.asarray(base[:, None] * np.linspace(0.5, 1.5, 5))
    values = {swept: getattr(model, swept) * jnp.linspace(0.8, 1.2, 5)}
    ys = _kernel(model, values, y0, solver, 6, block=8)
    np.testing.assert_allclose(ys, _simulated(model, values, y0, solver, 6),
                               rtol=1e-12, atol=1e-12)


class Mixed(dl.Model):
    """A step using most of what the kernel unrolls: a constant matrix product, ``where``,
    ``relu`` (a custom JVP), sums and maxima, flips, splits, clipping, time."""

    a: float = 1.0
    state_names = ("p", "q", "r", "s")

    def vector_field(self, t, y):
        m = jnp.arange(16.0).reshape(4, 4) / 16.0
        z = jnp.where(y > 0, jax.nn.relu(y), -y**2) + jnp.sum(y) * 0.01
        w = m @ jnp.tanh(y) - self.a * jnp.flip(y) + jnp.clip(y, -1, 1) * jnp.sin(t)
        u, v = jnp.split(y, 2)
        return 0.1 * (z + w + jnp.concatenate([v, u]) + jnp.max(y))

    def initial_state(self):
        return jnp.array([0.1, -0.2, 0.3, -0.4])


def test_a_model_using_many_operations_equals_simulate():
    values = {"a": jnp.linspace(0.5, 1.5, 10)}
    y0 = jnp.asarray(np.random.default_rng(0).normal(size=(4, 10)))
    ys = _kernel(Mixed(), values, y0, "euler", 5, block=8)
    np.testing.assert_allclose(ys, _simulated(Mixed(), values, y0, "euler", 5),
                               rtol=1e-12, atol=1e-12)


def test_float32_equals_simulate_in_float32():
    dl.set_precision("float32")
    try:
        values, y0 = _lorenz_batch(20)
        values = {k: v.astype(jnp.float32) for k, v in values.items()}
        y0 = y0.astype(jnp.float32)
        ys = _kernel(LORENZ(), values, y0, "rk4", 11, block=8)
        expected = _simulated(LORENZ(), values, y0, "rk4", 11)
    finally:
        dl.set_precision("float64")
    assert ys.dtype == np.float32
    np.testing.assert_allclose(ys, expected, rtol=1e-5, atol=1e-5)


def test_new_values_and_times_reuse_the_compiled_kernel(monkeypatch):
    traced = []
    original = _pallas_sweep._step_program
    monkeypatch.setattr(_pallas_sweep, "_step_program",
                        lambda *a: traced.append(1) or original(*a))
    values, y0 = _lorenz_batch(16)
    first = solve_block_pallas(LORENZ(), "rk4", y0, values, t0=0.0, h=0.01, n_steps=50,
                               n_intervals=5, block=16)
    before = len(traced)
    again = solve_block_pallas(LORENZ(beta=2.0), "rk4", y0 * 1.1, {"rho": values["rho"] + 1,
                               "sigma": values["sigma"]}, t0=1.0, h=0.02, n_steps=60,
                               n_intervals=5, block=16)
    assert len(traced) == before and not np.allclose(first, again)


@pytest.mark.parametrize("model, solver, words", [
    (LORENZ(), "tsit5", "adaptive"),
    (Noisy(), "euler_maruyama", "stochastic"),
    (dl.models.get("nbody")(), "rk4", "`gather`"),
])
def test_what_it_cannot_run_is_refused_in_one_line(model, solver, words):
    assert not pallas_supported(model, solver)
    y0 = jnp.ones((len(model.state_names), 4))
    with pytest.raises(ValueError, match=words) as error:
        solve_block_pallas(model, solver, y0, t0=0.0, h=0.1, n_steps=10, n_intervals=1)
    assert "per-trajectory kernel cannot run" in str(error.value)
    assert "\n" not in str(error.value)


def test_supported_models_and_bad_arguments():
    assert pallas_supported(LORENZ(), "rk4", ["rho"]) and pallas_supported(LORENZ(), dl.solvers.Heun())
    assert not pallas_supported(LORENZ(), "rk4", ["rhoo"])
    values, y0 = _lorenz_batch(4)
    run = lambda **kw: solve_block_pallas(  # noqa: E731
        LORENZ(), "rk4", kw.pop("y0", y0), kw.pop("values", values),
        **{"t0": 0.0, "h": 0.1, "n_steps": 10, "n_intervals": 2, **kw})
    for kw, words in [({"block": 100}, "power of two"), ({"n_intervals": 11}, "n_intervals"),
                      ({"y0": y0.T}, r"y0 must be \(n_states, B\)"), ({"h": -0.1}, "positive"),
                      ({"values": {"rho": jnp.ones(3)}}, r"values\['rho'\]"),
                      ({"values": {"rhoo": jnp.ones(4)}}, "no parameter 'rhoo'")]:
        with pytest.raises(ValueError, match=words):
            run(**kw)


def test_lowers_for_cuda_through_triton_without_a_gpu():
    pytest.importorskip("jax._src.pallas.triton.pallas_call_registration",
                        reason="this jaxlib has no Triton lowering for Pallas")

    def sweep(y0, rho, t0, h, n_steps):
        return solve_block_pallas(LORENZ(), "rk4", y0, {"rho": rho}, t0=t0, h=h,
                                  n_steps=n_steps, n_intervals=10, block=128,
                                  interpret=False)

    f64 = jax.ShapeDtypeStruct((), jnp.float64)
    lowered = jax.jit(sweep).trace(
        jax.ShapeDtypeStruct((3, 1000), jnp.float64), jax.ShapeDtypeStruct((1000,), jnp.float64),
        f64, f64, jax.ShapeDtypeStruct((), jnp.int64)).lower(lowering_platforms=("cuda",))
    text = lowered.as_text()
    assert "__gpu$xla.gpu.triton" in text and "grid_x = 8" in text
