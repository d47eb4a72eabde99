"""Field models typed as equations: a ``grid:`` line, initial fields of the coordinates,
operators, and the linear part found in the text."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import EquationError, from_equations

GRAY_SCOTT = """\
name: TypedGrayScott
params: Du = 2e-5, Dv = 1e-5, F = 0.04, k = 0.06
grid: x = periodic(0, 1, 16), y = periodic(0, 1, 16)
init: u = 1 - 0.5*exp(-((x - 0.5)**2 + (y - 0.5)**2)/0.004), v = 0.25*exp(-((x - 0.5)**2 + (y - 0.5)**2)/0.004)
du/dt = Du*laplace(u) - u*v**2 + F*(1 - u)
dv/dt = Dv*laplace(v) + u*v**2 - (F + k)*v
"""

DIFFUSION = """\
params: D = 0.01
grid: x = periodic(0, 1, 16)
init: u = sin(2*pi*x)
du/dt = D*laplace(u)
"""


@pytest.fixture(scope="module")
def gray_scott():
    return from_equations(GRAY_SCOTT)()


@pytest.fixture(scope="module")
def diffusion():
    return from_equations(DIFFUSION)()


def test_gray_scott_typed_equals_the_built_in(gray_scott):
    built_in = dl.models.get("gray_scott")(F=0.05).with_points((16, 16))
    typed = gray_scott.replace(F=0.05)
    start = typed.initial_fields()
    for name in ("u", "v"):
        assert jnp.allclose(start[name], built_in.initial_fields()[name], rtol=0, atol=1e-15)
    # rk4 adds the linear and nonlinear parts, however they are split
    ours = dl.simulate(typed, 20.0, solver="rk4", dt=0.5, n_save=3)
    theirs = dl.simulate(built_in, 20.0, solver="rk4", dt=0.5, n_save=3)
    assert ours["u"].shape == (3, 16, 16)
    for name in ("u", "v"):
        assert float(jnp.max(jnp.abs(ours[name] - theirs[name]))) < 1e-12
        assert float(jnp.max(jnp.abs(ours[name] - start[name]))) > 1e-3  # it moved


def test_gray_scott_typed_runs_etdrk4_by_default(gray_scott):
    traj = dl.simulate(gray_scott, 20.0, n_save=3)
    assert traj.solver == "etdrk4" and traj["v"].shape == (3, 16, 16)
    built_in = dl.models.get("gray_scott")().with_points((16, 16))
    theirs = dl.simulate(built_in, 20.0, n_save=3)
    assert float(jnp.max(jnp.abs(traj["v"] - theirs["v"]))) < 1e-6


def test_gray_scott_linear_part_holds_diffusion_and_decay(gray_scott):
    linear = gray_scott.linear_part()
    laplacian = jnp.asarray(dl.models.laplace_multiplier(gray_scott.grid))
    assert jnp.allclose(linear["u"], 2e-5 * laplacian, rtol=1e-15, atol=0)
    assert jnp.allclose(linear["v"], 1e-5 * laplacian - 0.1, rtol=1e-15, atol=0)


def test_diffusion_decays_as_its_fourier_mode(diffusion):
    traj = dl.simulate(diffusion, 1.0, n_save=3)
    x = np.arange(16) / 16
    for t, u in zip(np.asarray(traj.ts), np.asarray(traj["u"])):
        exact = np.exp(-0.01 * (2 * np.pi) ** 2 * t) * np.sin(2 * np.pi * x)
        np.testing.assert_allclose(u, exact, rtol=0, atol=1e-12)


def test_diffusion_is_differentiable_in_its_parameter(diffusion):
    def peak(D):
        return dl.simulate(diffusion.replace(D=D), 1.0, n_save=2)["u"][-1, 4]  # x = 1/4

    k2 = (2 * np.pi) ** 2
    np.testing.assert_allclose(float(jax.grad(peak)(0.01)), -k2 * np.exp(-0.01 * k2),
                               rtol=1e-10)


def test_diffusion_linear_multiplier_is_minus_d_k_squared(diffusion):
    k = 2 * np.pi * np.fft.rfftfreq(16, 1 / 16)
    np.testing.assert_allclose(np.asarray(diffusion.linear_part()["u"]), -0.01 * k**2,
                               rtol=1e-15, atol=0)
    assert float(diffusion.nonlinear_part(0.0, diffusion.initial_fields())["u"].max()) == 0.0


@pytest.mark.parametrize(("rate", "linear_u"), [
    ("-c*u + D*laplace(u)/2", "-c + D/2*lap"),
    ("-(laplace(u)*D) - u*c", "-D*lap - c"),
    ("-laplace(u)*D - -u*c", "-D*lap + c"),          # a negated factor: was nonlinear
    ("D*laplace(u) + u*u + t*u + x*u", "D*lap"),     # none of the rest is constant * u
    ("sqrt(D)*2*u - laplace(u*u)", "2*sqrt(D)"),
])
def test_linear_terms_are_found_in_any_arrangement(rate, linear_u):
    cls = from_equations(f"params: D = 0.3, c = 1.5\ngrid: x = periodic(0, 1, 8)\n"
                         f"init: u = cos(2*pi*x)\ndu/dt = {rate}\n")
    model = cls()
    lap = -(2 * np.pi * np.fft.rfftfreq(8, 1 / 8)) ** 2
    expected = eval(linear_u, {"D": 0.3, "c": 1.5, "lap": lap, "sqrt": np.sqrt})
    np.testing.assert_allclose(np.asarray(model.linear_part()["u"]),
                               np.broadcast_to(expected, (5,)), rtol=1e-14, atol=1e-14)
    # whatever the split, linear + nonlinear is the right-hand side as written
    fields = {"u": 0.2 + jnp.cos(2 * np.pi * model.grid.coordinates[0])}
    got = model.vector_field(0.7, fields)["u"]
    assert got.shape == (8,)
    u, x = fields["u"], model.grid.coordinates[0]
    spectral = dl.models.from_fourier(lap * dl.models.to_fourier(u, model.grid), model.grid)
    spectral_u2 = dl.models.from_fourier(lap * dl.models.to_fourier(u * u, model.grid),
                                         model.grid)
    direct = eval(rate.replace("laplace(u*u)", "spectral_u2").replace("laplace(u)", "spectral"),
                  {"D": 0.3, "c": 1.5, "u": u, "t": 0.7, "x": x, "sqrt": np.sqrt,
                   "spectral": spectral, "spectral_u2": spectral_u2})
    np.testing.assert_allclose(np.asarray(got), np.asarray(direct), rtol=0, atol=1e-12)


def test_first_derivative_and_walled_grid():
    text = ("params: c = 1\ngrid: x = periodic(0, 1, 16)\ninit: u = sin(2*pi*x)\n"
            "du/dt = -c*d_dx(u)\n")
    model = from_equations(text)()
    x = np.arange(16) / 16
    got = model.vector_field(0.0, model.initial_fields())["u"]
    np.testing.assert_allclose(got, -2 * np.pi * np.cos(2 * np.pi * x), atol=1e-12)
    walled = from_equations("params: D = 0.1\ngrid: x = dirichlet(0, 1, 16, 0)\n"
                            "init: u = sin(pi*x)\ndu/dt = D*laplace(u)\n")()
    assert walled.linear_part() is None and walled.default_solver == "rk4"
    traj = dl.simulate(walled, 0.5, n_save=2)
    xc = (np.arange(16) + 0.5) / 16
    exact = np.exp(-0.1 * np.pi**2 * 0.5) * np.sin(np.pi * xc)
    np.testing.assert_allclose(traj["u"][-1], exact, atol=2e-3)  # second-order in space
    with pytest.raises(ValueError, match="etdrk4 needs a linear part diagonal in Fourier"):
        dl.simulate(walled, 0.5, solver="etdrk4")


def test_typed_kuramoto_sivashinsky_takes_its_fourth_derivative_exactly():
    """``laplace(laplace(u))`` was left in the nonlinear part, where etdrk4 took it
    explicitly: the typed equation diverged at dt = 0.25 (t = 1.5) where the built-in
    model runs. Nested operators of ``u`` are now linear on a periodic grid."""
    typed = from_equations(
        "params: nu = 1\ngrid: x = periodic(0, 100.53096491487338, 128)\n"
        "init: u = cos(x/16)*(1 + sin(x/16))\n"
        "du/dt = -laplace(u) - nu*laplace(laplace(u)) - u*d_dx(u)\n")()
    built_in = dl.models.KuramotoSivashinsky()
    np.testing.assert_allclose(np.asarray(typed.linear_part()["u"]),
                               np.asarray(built_in.linear_part()["u"]), rtol=1e-14, atol=1e-9)
    traj = dl.simulate(typed, 50.0, dt=0.25, n_save=3)
    assert traj.ok and 1 < float(jnp.max(jnp.abs(traj["u"][-1]))) < 10  # a chaotic state
    # u u_x has no mean (the spectral derivative is skew): the mean stays zero
    np.testing.assert_allclose(np.asarray(traj["u"]).mean(axis=1), 0.0, atol=1e-13)


@pytest.mark.parametrize(("axis", "rate"), [(0, "-c*d_dx(u)"), (1, "-d_dy(u)*c")])
def test_advection_by_a_first_derivative_translates_exactly(axis, rate):
    """``-c d_dx(u)`` as a multiplier ``-i c k`` (Nyquist mode dropped): etdrk4 moves a
    sine along its axis without error."""
    model = from_equations(f"params: c = 0.3\ngrid: x = periodic(0, 1, 16), "
                           f"y = periodic(0, 1, 8)\ninit: u = sin(2*pi*x) * cos(2*pi*y)\n"
                           f"du/dt = {rate}\n")()
    traj = dl.simulate(model, 1.0, dt=0.1, n_save=3)
    x, y = model.grid.coordinates
    for t, u in zip(np.asarray(traj.ts), np.asarray(traj["u"]), strict=True):
        dx, dy = (0.3 * t, 0.0) if axis == 0 else (0.0, 0.3 * t)
        exact = np.sin(2 * np.pi * (x - dx)) * np.cos(2 * np.pi * (y - dy))
        np.testing.assert_allclose(u, exact, atol=1e-12)
    assert float(jnp.max(jnp.abs(model.nonlinear_part(0.0, model.initial_fields())["u"]))) == 0


def _error(text) -> str:
    with pytest.raises(EquationError) as info:
        from_equations(text)
    return str(info.value)


@pytest.mark.parametrize(("line", "expected"), [
    ("du/dt = gradient(u)", ("line 4, column 9: unknown function 'gradient'; .* and the "
                            "operators laplace, d_dx")),
    ("du/dt = laplace(D)", r"line 4, column 17: laplace acts on a field \(u\), not on D"),
    ("du/dt = d_dy(u)", ("line 4, column 9: unknown function 'd_dy': the grid has no axis "
                         "'y'; its derivatives are d_dx$")),
    ("du/dt = lapace(u)", r"line 4, column 9: unknown function 'lapace' \(did you mean "
                          r"laplace\?\); the functions are abs, "),
    ("du/dt = laplace(u, u)", "line 4, column 9: laplace takes 1 argument, got 2"),
])
def test_operator_errors_name_the_line(line, expected):
    text = f"params: D = 1\ngrid: x = periodic(0, 1, 8)\ninit: u = x\n{line}\n"
    assert "\n" not in _error(text)
    assert re.match(expected, _error(text))


@pytest.mark.parametrize(("grid", "expected"), [
    ("x = periodic(0, 1, 0)", ("line 2, column 26: axis x needs a whole number of points, at "
                              "least 2, not 0")),
    ("x = periodic(0, 1, 8), z = periodic(0, 1, 8)", ("line 2, column 30: the grid's axes "
                                                     "are x, y, z in that order; expected y")),
    ("x = spectral(0, 1, 8)", "line 2, column 11: an axis is one of periodic"),
    ("x = periodic(1, 0, 8)", "line 2, column 11: axis x runs from low to high"),
])
def test_grid_errors_name_the_line(grid, expected):
    assert _error(f"params: D = 1\ngrid: {grid}\ninit: u = 1\ndu/dt = 0\n").startswith(expected)


def test_operators_and_coordinates_stay_out_of_odes():
    message = _error("init: u = 1\ndu/dt = laplace(u)\n")
    assert message.startswith("line 2, column 9: unknown function 'laplace'")
    assert "operators" not in message
    assert _error("init: u = x\ndu/dt = -u\n").startswith("line 1, column 11: unknown name 'x'")
    assert _error("grid: x = periodic(0, 1, 8)\ninit: u = t\ndu/dt = -u\n").startswith(
        "line 2, column 11: an initial value may use parameters and coordinates only")
