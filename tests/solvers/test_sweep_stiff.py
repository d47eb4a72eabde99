"""Stiff sweeps: implicit solvers inside the sharded sweep program.

Inside ``shard_map`` every traced value carries the mesh's manual axis in its type, which
lineax (the Newton iterations of the Kvaerno solvers, optimistix's root finds) refused as
a structure mismatch; ``map_batch`` traces a device's program with no mesh about. The
tests run on the 8 CPU devices of ``conftest.py``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest
from scipy.integrate import solve_ivp

import difflab as dl
from difflab.cli import main

# white-box: the sharding helper the sweep's program is built on
from difflab.solvers import _sharding

MUS = np.linspace(1.0, 5.0, 12)  # 12 points: padded to 16 over the 8 devices
T1 = 10.0


def vdp(mu=1.0):
    return dl.models.get("van_der_pol")(mu=mu)


def test_a_root_find_maps_over_the_devices():
    mesh = _sharding.batch_mesh()
    assert mesh.size == 8

    def cube_roots(a):
        def one(a):
            return optx.root_find(lambda x, a: x**3 - a, optx.Newton(rtol=1e-12, atol=1e-12),
                                  jnp.ones(()), a).value
        return jax.vmap(one)(a)

    a = np.linspace(1.0, 30.0, 16)
    roots = jax.jit(_sharding.map_batch(cube_roots, mesh))(_sharding.put_batch(a, mesh))
    np.testing.assert_allclose(_sharding.local_rows(roots), np.cbrt(a), rtol=1e-12)


def simulated(solver, n_save):
    """Each point of ``MUS`` run alone by ``dl.simulate``: (points, n_save, states)."""
    return np.stack([np.asarray(dl.simulate(vdp(mu), T1, solver=solver, n_save=n_save).ys)
                     for mu in MUS])


@pytest.mark.parametrize("solver, layout", [
    ("kvaerno5", "blocks"), ("kvaerno5", "whole"),
    pytest.param("kvaerno3", "whole", marks=pytest.mark.slow),
    pytest.param("kvaerno4", "blocks", marks=pytest.mark.slow)])
def test_an_implicit_sweep_gives_simulate_point_by_point(solver, layout):
    # blocks: each device's 2 rows one at a time (lax.map); whole: both at once
    res = dl.sweep(vdp(), dl.grid(mu=MUS), T1, solver=solver, n_save=6, layout=layout,
                   block_size=1 if layout == "blocks" else None,
                   observables={"peak": "max(x)"})
    ys = simulated(solver, 6)
    assert np.all(np.asarray(res.result) == 0)
    np.testing.assert_allclose(np.asarray(res.ys), ys, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.observables["peak"], ys[:, :, 0].max(axis=1), rtol=1e-9)


def test_a_stiff_sweep_agrees_with_scipy_radau():
    mus = np.array([5.0, 50.0, 200.0])  # the last two stiff
    res = dl.sweep(vdp(), {"mu": mus}, T1, solver="kvaerno5", rtol=1e-9, atol=1e-11)
    assert np.all(np.asarray(res.result) == 0)
    for mu, y in zip(mus, res.final):
        ref = solve_ivp(lambda t, y: [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]], (0, T1),
                        [2.0, 0.0], method="Radau", rtol=1e-12, atol=1e-12).y[:, -1]
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7, err_msg=f"mu={mu}")


STIFF_CONFIG = """\
model = "van_der_pol"
name = "stiff"

[solve]
solver = "kvaerno5"
t1 = 10.0
n_save = 6

[space.grid]
mu = { linspace = [1.0, 5.0, 12] }

[output.observables]
peak = "max(x)"
"""


def test_the_cli_sweeps_with_a_stiff_solver(tmp_path, capsys):
    config, out = tmp_path / "stiff.toml", tmp_path / "stiff.h5"
    config.write_text(STIFF_CONFIG)
    assert main(["sweep", str(config), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    stored = dl.open(out).sweeps[0]
    ys = simulated("kvaerno5", 6)
    np.testing.assert_allclose(np.asarray(stored.y), ys, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(stored.observables["peak"]),
                               ys[:, :, 0].max(axis=1), rtol=1e-9)

