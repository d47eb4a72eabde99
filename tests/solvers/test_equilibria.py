"""Equilibria by multi-start Newton, against closed forms."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl


class Linear2(dl.Model):
    """``y' = A y`` with ``A = [[a, b], [c, d]]``: one equilibrium, the origin."""

    a: float = dl.param(-1.0, bounds=(-10.0, 10.0))
    b: float = dl.param(0.0, bounds=(-10.0, 10.0))
    c: float = dl.param(0.0, bounds=(-10.0, 10.0))
    d: float = dl.param(-2.0, bounds=(-10.0, 10.0))
    state_names = ("x", "y")

    def vector_field(self, t, y):
        return jnp.stack([self.a * y[0] + self.b * y[1], self.c * y[0] + self.d * y[1]])

    def initial_state(self):
        return jnp.array([1.0, 1.0])


class Bistable(dl.Model):
    """``x' = x - x^3``, ``y' = -y``: saddle at 0, stable nodes at x = +-1."""

    state_names = ("x", "y")

    def vector_field(self, t, y):
        return jnp.stack([y[0] - y[0] ** 3, -y[1]])

    def initial_state(self):
        return jnp.array([0.5, 0.0])


@pytest.mark.parametrize(("values", "expected", "eigs"), [
    ({"a": -1.0, "b": 0.0, "c": 0.0, "d": -2.0}, "stable node", [-1, -2]),
    ({"a": 1.0, "b": 0.0, "c": 0.0, "d": 2.0}, "unstable node", [2, 1]),
    ({"a": -1.0, "b": -2.0, "c": 2.0, "d": -1.0}, "stable focus", [-1 + 2j, -1 - 2j]),
    ({"a": 0.5, "b": -2.0, "c": 2.0, "d": 0.5}, "unstable focus", [0.5 + 2j, 0.5 - 2j]),
    ({"a": 1.0, "b": 0.0, "c": 0.0, "d": -1.0}, "saddle", [1, -1]),
    ({"a": 0.0, "b": -3.0, "c": 3.0, "d": 0.0}, "centre", [3j, -3j]),
])
def test_linear_system_classes(values, expected, eigs):
    model = Linear2().replace(**values)
    found = dl.equilibria(model, n_starts=16)
    assert len(found) == 1
    np.testing.assert_allclose(found.states[0], [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(found.eigenvalues[0], eigs, atol=1e-12)
    assert found.stability == (expected,)


class Degenerate(dl.Model):
    """``x' = -x^3``, ``y' = -y``: one equilibrium with a zero eigenvalue."""

    state_names = ("x", "y")

    def vector_field(self, t, y):
        return jnp.stack([-y[0] ** 3, -y[1]])

    def initial_state(self):
        return jnp.array([1.0, 1.0])


def test_a_zero_eigenvalue_is_non_hyperbolic():
    found = dl.equilibria(Degenerate(), n_starts=16)
    assert found.stability == ("non-hyperbolic",)
    np.testing.assert_allclose(found.states[0], [0.0, 0.0], atol=1e-6)


def test_all_equilibria_are_found_and_merged():
    found = dl.equilibria(Bistable(), n_starts=64)
    np.testing.assert_allclose(found.states, [[-1, 0], [0, 0], [1, 0]], atol=1e-12)
    assert found.stability == ("stable node", "saddle", "stable node")


def test_box_limits_the_equilibria():
    found = dl.equilibria(Bistable(), box={"x": (0.5, 2.0)}, n_starts=32)
    np.testing.assert_allclose(found.states, [[1, 0]], atol=1e-12)
    with pytest.raises(ValueError, match="no state 'q'"):
        dl.equilibria(Bistable(), box={"q": (0, 1)})
    with pytest.raises(ValueError, match="LO < HI"):
        dl.equilibria(Bistable(), box={"x": (1, 0)})


@pytest.mark.slow
def test_lorenz_equilibria_match_the_closed_form():
    sigma, rho, beta = 10.0, 28.0, 8.0 / 3.0
    found = dl.equilibria(dl.models.get("lorenz")())
    c = np.sqrt(beta * (rho - 1))
    np.testing.assert_allclose(found.states, [[-c, -c, rho - 1], [0, 0, 0], [c, c, rho - 1]],
                               atol=1e-9)
    origin = found.eigenvalues[1]
    root = np.sqrt((sigma + 1) ** 2 + 4 * sigma * (rho - 1))
    np.testing.assert_allclose(origin, [(-(sigma + 1) + root) / 2, -beta,
                                        (-(sigma + 1) - root) / 2], rtol=1e-12)
    assert found.stability == ("saddle", "saddle", "saddle")  # chaotic: C+- unstable foci-saddles
    calm = dl.equilibria(dl.models.get("lorenz")(rho=10.0))
    assert calm.stability == ("stable focus", "saddle", "stable focus")


def test_json_shape():
    data = json.loads(dl.equilibria(Bistable(), n_starts=16).to_json())
    assert list(data) == ["equilibria"]
    first = data["equilibria"][0]
    assert set(first) == {"state", "eigenvalues", "stability"}
    assert set(first["state"]) == {"x", "y"}
    assert all(len(pair) == 2 for pair in first["eigenvalues"])
