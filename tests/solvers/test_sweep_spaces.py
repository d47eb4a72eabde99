"""Parameter spaces: grids, random, Latin-hypercube and Sobol samples, and their checks."""

import jax
import numpy as np
import pytest
from scipy.stats import qmc

import difflab as dl
# white-box: the Sobol bit tables (sobol_unit) and product(), which has no public name
from difflab.solvers._sweeps import spaces as _spaces


def test_grid_is_every_combination_first_axis_slowest():
    space = dl.grid(rho=[1.0, 2.0, 3.0], sigma=np.logspace(0, 1, 2))
    assert space.shape == (3, 2) and len(space) == 6 and space.kind == "grid"
    np.testing.assert_array_equal(space["rho"], [1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(space["sigma"], [1, 10, 1, 10, 1, 10])
    np.testing.assert_array_equal(space.reshape(space["rho"])[:, 0], [1, 2, 3])
    assert repr(space) == "Space(grid of 6 points (3x2) over rho, sigma)"


def test_a_space_of_many_columns_prints_in_one_short_line():
    space = dl.uniform(jax.random.key(0), 100, {f"p{i}": (0, 1) for i in range(20)})
    assert repr(space) == ("Space(uniform of 100 points over p0, p1, p2, p3, p4, p5, ... "
                           "(20 in all))")


def test_initial_state_components_join_a_grid_by_name():
    space = dl.grid({"y0.x": [-1.0, 1.0]}, rho=[10.0, 28.0])
    assert space.names == ("y0.x", "rho")
    space.check(dl.models.get("lorenz")())


def test_uniform_samples_are_reproducible_and_in_range():
    key = jax.random.key(3)
    a = dl.uniform(key, 500, rho=(0.0, 28.0), sigma=(1.0, 100.0, "log"))
    b = dl.uniform(key, 500, rho=(0.0, 28.0), sigma=(1.0, 100.0, "log"))
    np.testing.assert_array_equal(a["rho"], b["rho"])
    assert a["rho"].min() >= 0 and a["rho"].max() < 28
    log_sigma = np.log10(a["sigma"])
    assert 0 <= log_sigma.min() and log_sigma.max() < 2 and abs(log_sigma.mean() - 1) < 0.1
    other = dl.uniform(jax.random.key(4), 500, rho=(0.0, 28.0), sigma=(1.0, 100.0))
    assert not np.allclose(other["rho"], a["rho"])


def test_latin_hypercube_puts_one_point_in_each_stratum():
    n = 64
    space = dl.latin_hypercube(jax.random.key(0), n, a=(0.0, 1.0), b=(-2.0, 2.0))
    for name, (low, high) in (("a", (0.0, 1.0)), ("b", (-2.0, 2.0))):
        strata = np.floor((space[name] - low) / (high - low) * n).astype(int)
        np.testing.assert_array_equal(np.sort(strata), np.arange(n))


def test_sobol_matches_scipy_unscrambled():
    ours = _spaces.sobol_unit(256, 21).astype(np.float64) / 2.0**32
    theirs = qmc.Sobol(d=21, scramble=False).random(256)
    np.testing.assert_array_equal(ours, theirs)


def test_scrambled_sobol_keeps_its_balance():
    space = dl.sobol(jax.random.key(1), 128, a=(0.0, 1.0), b=(0.0, 1.0), c=(0.0, 1.0))
    for name in "abc":  # a digital shift keeps one point per dyadic interval of length 1/128
        strata = np.floor(space[name] * 128).astype(int)
        np.testing.assert_array_equal(np.sort(strata), np.arange(128))
    plain = dl.sobol(jax.random.key(1), 128, a=(0.0, 1.0), scramble=False)
    assert plain["a"][0] == 0.0 and space["a"][0] != 0.0
    assert qmc.discrepancy(np.stack([space[n] for n in "abc"], 1)) < 1e-3


def test_product_of_spaces():
    key = jax.random.key(0)
    space = _spaces.product(dl.uniform(key, 4, rho=(0.0, 1.0)), dl.grid(sigma=[1.0, 2.0, 3.0]))
    assert len(space) == 12 and space.shape == (4, 3)
    np.testing.assert_array_equal(space["sigma"][:3], [1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: dl.grid(), ValueError, "at least one parameter"),
        (lambda: dl.grid(rho=[]), ValueError, "has no values"),
        (lambda: dl.grid(rho=["a"]), TypeError, "must be numbers"),
        (lambda: dl.uniform(jax.random.key(0), 0, rho=(0, 1)), ValueError, "positive integer"),
        (lambda: dl.uniform(jax.random.key(0), 5, rho=(1, 0)), ValueError, "low < high"),
        (lambda: dl.uniform(jax.random.key(0), 5, rho=(0, 1, "log")), ValueError, "log scale"),
        (lambda: dl.sobol(jax.random.key(0), 4, **{f"p{i}": (0, 1) for i in range(22)}),
         ValueError, "at most 21"),
    ],
)
def test_bad_spaces_say_what_is_wrong(make, error, match):
    with pytest.raises(error, match=match):
        make()
