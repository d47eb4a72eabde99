"""Derived quantities typed as expressions, checked against NumPy and the models' own."""

import numpy as np
import pytest

import difflab as dl
from difflab.app.views import (
    DerivedExpression,
    ExpressionBook,
    derived_series,
    expression_names,
)


@pytest.fixture(scope="module")
def lorenz_run():
    return dl.simulate(dl.models.get("lorenz")(beta=2.5), t1=1.0)


def test_lorenz_expression_equals_numpy_over_the_run(lorenz_run):
    x, y, z = np.asarray(lorenz_run.ys).T
    expression = DerivedExpression.parse("  x*y - beta*z ", lorenz_run.model)
    assert expression.text == "x*y - beta*z"
    np.testing.assert_allclose(expression.series(lorenz_run), x * y - 2.5 * z, rtol=1e-12)
    radius = DerivedExpression.parse("sqrt(x**2 + y**2)", lorenz_run.model)
    np.testing.assert_allclose(radius.series(lorenz_run), np.hypot(x, y), rtol=1e-12)


def test_time_and_constants_broadcast_over_the_saved_times(lorenz_run):
    ts = np.asarray(lorenz_run.ts)
    series = DerivedExpression.parse("t * rho", lorenz_run.model).series(lorenz_run)
    np.testing.assert_allclose(series, 28.0 * ts)
    assert DerivedExpression.parse("2*pi", lorenz_run.model).series(lorenz_run).shape == ts.shape


def test_typed_energy_equals_the_hamiltonian_quantity():
    model = dl.models.get("pendulum")(g=3.0, length=2.0)
    run = dl.simulate(model, t1=2.0)
    typed = DerivedExpression.parse("omega**2/2 + g/length*(1 - cos(theta))", model)
    np.testing.assert_allclose(typed.series(run), derived_series(model, run.ys)["energy H"],
                               rtol=1e-12)


def test_kuramoto_phase_difference():
    model = dl.models.get("kuramoto")()
    run = dl.simulate(model, t1=1.0)
    ys = np.asarray(run.ys)
    series = DerivedExpression.parse("sin(theta0 - theta1)", model).series(run)
    np.testing.assert_allclose(series, np.sin(ys[:, 0] - ys[:, 1]), rtol=1e-12)


@pytest.mark.parametrize("text, message", [
    ("x +* y", "column 4: syntax error"),
    ("import os", "syntax error"),
    ("__class__", "names starting with '_' are not allowed"),
    ("xx", "unknown name 'xx'; did you mean x"),
    ("x.real", "attribute access"),
    ("open(x)", "unknown function 'open'"),
    ("", "expected an expression"),
])
def test_bad_expressions_are_refused_and_not_kept(text, message):
    model = dl.models.get("lorenz")()
    book = ExpressionBook()
    with pytest.raises(ValueError, match=message):
        book.add("lorenz", model, text)
    assert book.of("lorenz") == () and book.to_json() == {}


def test_the_book_keeps_expressions_per_model_and_reads_back_its_json():
    lorenz, pendulum = dl.models.get("lorenz")(), dl.models.get("pendulum")()
    book = ExpressionBook()
    book.add("lorenz", lorenz, "x*y - beta*z")
    book.add("pendulum", pendulum, "omega**2")
    with pytest.raises(ValueError, match="already defined"):
        book.add("lorenz", lorenz, " x*y - beta*z")
    assert book.of("lorenz") == ("x*y - beta*z",) and book.of("pendulum") == ("omega**2",)
    again = ExpressionBook(book.to_json())
    assert again.to_json() == {"lorenz": ["x*y - beta*z"], "pendulum": ["omega**2"]}
    again.remove("lorenz", "x*y - beta*z")
    assert again.of("lorenz") == () and "lorenz" not in again.to_json()
    with pytest.raises(ValueError, match="no expression"):
        again.remove("lorenz", "x")


def test_the_book_compiles_only_what_the_model_accepts():
    book = ExpressionBook({"lorenz": ["x*y", "theta0", 3], "pendulum": "not a list"})
    assert book.of("lorenz") == ("x*y", "theta0") and book.of("pendulum") == ()
    compiled = book.compiled("lorenz", dl.models.get("lorenz")())
    assert [e.text for e in compiled] == ["x*y"]
    assert expression_names(dl.models.get("lorenz")()) == ("x", "y", "z", "sigma", "rho",
                                                           "beta", "t")
