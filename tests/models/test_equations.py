"""Typed equations: parsed by an allow-list, compiled to a real difflab.Model."""

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.models import EquationError, check_equations, from_equations
from tests.models_for_tests import Spring

SPRING = """\
# a damped spring
params: k = 1.0 in (0, 10), c = 0.1
init: x = 1, v = 0
dx/dt = v
dv/dt = -k*x - c*v
"""


def _final_x(model):
    return dl.simulate(model, 3.0, dt=1e-2).final[0]


def test_equations_make_a_model_class_with_parameters_and_states():
    cls = from_equations(SPRING)
    assert issubclass(cls, dl.Model) and cls.state_names == ("x", "v")
    specs = cls.parameter_specs()
    assert list(specs) == ["k", "c"]
    assert specs["k"].bounds == (0.0, 10.0) and specs["c"].default == 0.1
    model = cls(k=2.0)
    assert float(model.k) == 2.0 and model.equations == SPRING
    assert from_equations(SPRING) is cls  # the same text reuses the class (and compiled code)


@pytest.mark.slow
def test_agrees_with_the_hand_written_model():
    for k, c in [(1.0, 0.1), (3.0, 0.5)]:
        typed = dl.simulate(from_equations(SPRING)(k=k, c=c), 5.0, dt=1e-2)
        hand = dl.simulate(Spring(k=k, c=c), 5.0, dt=1e-2)
        np.testing.assert_allclose(typed.ys, hand.ys, rtol=1e-12, atol=1e-14)


@pytest.mark.slow
def test_grad_matches_finite_differences_and_the_hand_written_model():
    model = from_equations(SPRING)(k=2.0, c=0.3)
    grads = jax.grad(_final_x)(model)
    h = 1e-6
    for name in ("k", "c"):
        value = float(getattr(model, name))
        up = _final_x(model.replace(**{name: value + h}))
        down = _final_x(model.replace(**{name: value - h}))
        np.testing.assert_allclose(getattr(grads, name), (up - down) / (2 * h), rtol=1e-6)
    hand = jax.grad(_final_x)(Spring(k=2.0, c=0.3))
    np.testing.assert_allclose([grads.k, grads.c], [hand.k, hand.c], rtol=1e-12)


@pytest.mark.slow
def test_vmap_and_jit_compile_once_for_any_values():
    cls = from_equations(SPRING)
    traces = []

    @jax.jit
    def final(k):
        traces.append(1)
        return _final_x(cls(k=k))

    ks = jnp.array([0.5, 1.0, 2.0])
    first = final(ks[0])
    singles = [first] + [final(k) for k in ks[1:]]
    assert len(traces) == 1  # new parameter values reuse the compiled program
    np.testing.assert_allclose(jax.vmap(final)(ks), singles, rtol=1e-12)


@pytest.mark.slow
def test_functions_comparisons_time_auxiliaries_and_initial_expressions():
    text = """\
name: Driven
description: a driven, clipped oscillator
params: w = 2*pi, a = 0.5, x0 = 0.25
init: x = 2*x0, v = -x0
force = a*sin(w*t) + where(x > 0 and v > 0, -1, 0)
dx/dt = clip(v, -10, 10)
dv/dt = force - x**2*sign(x) + max(0, -1 < x < 1)
"""
    cls = from_equations(text)
    assert cls.__name__ == "Driven" and cls.description == "a driven, clipped oscillator"
    model = cls()
    y0 = model.initial_state()
    np.testing.assert_allclose(y0, [0.5, -0.25])
    t = 0.1
    x, v = 0.5, -0.25
    expected_v = 0.5 * np.sin(2 * np.pi * t) + 0 - x**2 + 1
    np.testing.assert_allclose(model.vector_field(t, y0), [v, expected_v], rtol=1e-12)
    assert np.isfinite(dl.simulate(model, 1.0).final).all()


def test_class_is_named_after_its_file_or_given_name():
    assert from_equations(SPRING, path="models/damped-spring.eqn").__name__ == "DampedSpring"
    assert from_equations(SPRING, name="Mine").__name__ == "Mine"


def _problem(text):
    problems = check_equations(text)
    assert problems, f"accepted: {text!r}"
    with pytest.raises(EquationError):
        from_equations(text)
    return problems[0]


INIT = "\ninit: x = 1"


@pytest.mark.parametrize(
    ("rhs", "column", "message"),
    [
        ("__import__('os')", 9, "names starting with '_' are not allowed"),
        ("__import__('os').system('true')", 9, "attribute access"),
        ("x.real", 9, "attribute access"),
        ("x[0]", 9, "subscripts"),
        ("(lambda: 1)()", 10, "lambda is not allowed"),
        ("[x for x in (1, 2)]", 9, "comprehensions are not allowed"),
        ("sum(x for x in (1, 2))", 9, "unknown function 'sum'"),
        ("'x'", 9, "strings are not allowed"),
        ('f"{x}"', 9, "strings are not allowed"),
        ("x ** 1e6", 14, "exponent too large"),
        ("2 ** 2 ** 2 ** 2 ** 2", 14, "exponent too large"),
        ("9" * 500, 9, "number too large"),
        ("(" * 40 + "x" + ")" * 40, 39, "nested too deeply"),
        ("-" * 500 + "x", 39, "nested too deeply"),
        ("x if x > 0 else 0", 9, "use where(c, a, b)"),
        ("(y := 1)", 10, "':=' is not allowed"),
        ("x // 2", 9, "operator '//' is not allowed"),
        ("open(x)", 9, "unknown function 'open'"),
        ("exp(x=1)", 15, "keyword arguments are not allowed"),
        ("sin(x, x)", 9, "sin takes 1 argument, got 2"),
        ("q + 1", 9, "unknown name 'q'"),
        ("sin", 9, "sin is a function"),
        ("1j", 9, "use a real number"),
        ("x +", 9, "syntax error"),
    ],
)
def test_hostile_or_wrong_input_is_rejected_with_line_and_column(rhs, column, message):
    problem = _problem(f"# comment\ndx/dt = {rhs}{INIT}")
    assert (problem.line, problem.column) == (2, column) and message in problem.message, problem


def test_very_long_input_is_rejected_quickly():
    start = time.perf_counter()
    assert "text too long" in _problem("dx/dt = x\n" + "# " + "x" * 60_000 + INIT).message
    big = "\n".join(f"a{i} = {i}" for i in range(3000)) + "\ndx/dt = x" + INIT
    assert check_equations(big) == []
    assert time.perf_counter() - start < 5.0


def test_a_line_as_long_as_the_text_allows_parses():
    """A generated sum on one line (200 or 2000 terms, past 1000 characters) is a line like
    any other: refused before with "'x' is not a state", a consequence of the line too long."""
    for n in (200, 2000):
        terms = " + ".join(["k*x"] * n)
        text = f"params: k = 1\n\ninit: x = 1\ndx/dt = -({terms})\n"
        assert len(text) > 1000 and check_equations(text) == []
        model = from_equations(text, path="long.eqn")(k=0.5)
        assert float(model.vector_field(0.0, jnp.array([2.0]))[0]) == pytest.approx(-n)
    too_long = "dx/dt = " + " + ".join(["x"] * 2001) + INIT
    assert "more than 2000 terms" in _problem(too_long).message


def test_a_cause_is_reported_before_its_consequences():
    """The 'dX/dt' line that fails declares no state, so the earlier init line's name looks
    unknown: the message names the failed line first."""
    text = "init: 1x = 1\ndx/dt = x\nd1x/dt = 0\ninit: x = 0\n"
    with pytest.raises(EquationError) as caught:
        from_equations(text, path="cause.eqn")
    assert str(caught.value).startswith("cause.eqn:3:2: '1x' is not a valid name")
    assert "not a state" in caught.value.problems[1].message


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("params: _k = 1\ndx/dt = x" + INIT, 1, 9, "not a valid name"),
        ("params: replace = 1\ndx/dt = x" + INIT, 1, 9, "reserved by difflab.Model"),
        ("params: pi = 3\ndx/dt = x" + INIT, 1, 9, "reserved"),
        ("params: k = 1, k = 2\ndx/dt = x" + INIT, 1, 16, "already declared on line 1"),
        ("params: k = 20 in (0, 10)\ndx/dt = x" + INIT, 1, 13, "outside the bounds"),
        ("params: k = x\ndx/dt = x" + INIT, 1, 13, "unknown name 'x'"),
        ("dx/dt = y2 + y1\ny1 = y2\ny2 = 1" + INIT, 2, 6, "used before it is defined"),
        ("dx/dt = x\ninit: x = t", 2, 11, "not the time t"),
        ("dx/dt = x\ndv/dt = x\ninit: x = v, v = 0", 3, 11, "not the state 'v'"),
        ("dx/dt = x\ndv/dt = x\ninit: x = 1", 2, 2, "state 'v' has no initial value"),
        ("dx/dt = x\ninit: x = 1, y = 2", 2, 14, "'y' is not a state"),
        ("x + 1" + INIT, 1, 1, "expected 'dX/dt = ...'"),
        ("params: k = 1", 1, 1, "no equations"),
    ],
)
def test_declaration_errors_point_at_the_name(text, line, column, message):
    problem = _problem(text)
    assert (problem.line, problem.column) == (line, column) and message in problem.message, problem


def test_every_problem_is_listed_for_as_you_type_feedback():
    text = "params: k = 1\ninit: x = 1, v = 0\ndx/dt = v.real\ndv/dt = -k*q\n"
    problems = check_equations(text)
    assert [(p.line, p.column, p.end_column) for p in problems] == [(3, 9, 15), (4, 12, 13)]
    with pytest.raises(EquationError, match=r"^spring.eqn:3:9: attribute access .* \(and 1 more"):
        from_equations(text, path="spring.eqn")
    assert check_equations(SPRING) == []


def test_columns_count_characters_not_bytes():
    problem = _problem("# é\nparams: ω = 1\ndx/dt = x" + INIT)
    assert (problem.line, problem.column) == (2, 9) and "not a valid name" in problem.message
    assert _problem("dx/dt = x # ünïcode\ndv/dt = é" + INIT).column == 9


def test_non_text_is_a_type_error():
    with pytest.raises(TypeError, match="must be a str"):
        from_equations(b"dx/dt = 1")


def test_whole_powers_have_exact_derivatives_at_zero():
    """``x**2`` multiplies: its second derivative at 0 is 2, not NaN (as pow's is), so a
    Hopf point's first Lyapunov coefficient is the one ``x*x`` gives."""
    text = ("params: mu = 0\ninit: x = 0, y = 0\n"
            "dx/dt = mu*x - y + {sq} - x*{ysq} - x*{sq}\n"
            "dy/dt = x + mu*y - y*{sq} - y*{ysq}\n")
    powers = from_equations(text.format(sq="x**2", ysq="y**2"))
    products = from_equations(text.format(sq="x*x", ysq="y*y"))
    second = jax.hessian(lambda y: powers().vector_field(0.0, y)[0])(jnp.zeros(2))
    np.testing.assert_allclose(second, [[2.0, 0.0], [0.0, 0.0]])
    l1, omega = dl.solvers.first_lyapunov_coefficient(powers(), np.zeros(2))
    expected, _ = dl.solvers.first_lyapunov_coefficient(products(), np.zeros(2))
    assert np.isfinite(expected) and omega == pytest.approx(1.0)
    assert l1 == pytest.approx(expected, rel=1e-12)


def test_every_problem_of_one_line_is_listed_once():
    """Issue 34: ``x.real + y`` reported only the unknown name; inside a refused part
    (a call of ``open``) nothing more is said."""
    problems = check_equations("params: k = 1.0\ninit: x = 1\ndx/dt = x.real + y\n")
    assert [(p.line, p.column, p.message) for p in problems] == [
        (3, 9, "attribute access ('.') is not allowed"),
        (3, 18, "unknown name 'y'; the names here are k, pi, t, x")]
    problems = check_equations("init: x = 1\ndx/dt = q + open(zz) + 1/0\n")
    assert [(p.column, p.message.split(";")[0]) for p in problems] == [
        (9, "unknown name 'q'"), (13, "unknown function 'open'"), (24, "division by zero")]


def test_typed_equations_declare_units_that_files_carry(tmp_path):
    import xarray as xr

    cls = from_equations("params: k = 1.0\ninit: x = 1, v = 0\n"
                         "units: t = s, x = m, v = m/s, k = 1/s^2\ndx/dt = v\ndv/dt = -k*x\n")
    model = cls()
    assert (model.time_unit, model.state_unit("x"), model.state_unit("v")) == ("s", "m", "m/s")
    assert cls.parameter_specs()["k"].unit == "1/s^2"
    path = tmp_path / "run.h5"
    dl.io.save(path, dl.simulate(model, 0.01, dt=1e-3))
    with xr.open_dataset(path, group="runs/run0", engine="h5netcdf") as ds:
        assert ds["time"].attrs["units"] == "s"
        assert ds["y"].attrs["comment"] == "units differ by state: x m, v m/s"
    assert from_equations(SPRING)().time_unit is None   # not declared: unknown


def test_units_of_unknown_names_or_odd_text_are_problems():
    problems = check_equations("params: k = 1.0\ninit: x = 1\nunits: t = s, q = m, x = m;rm\n"
                               "dx/dt = -k*x\n")
    assert [(p.line, p.column, p.message.split(" such as")[0]) for p in problems] == [
        (3, 26, "a unit is letters, digits, spaces and . / ^ * ( ) + - (at most 40),"),
        (3, 15, "units: 'q' is not the time t, a state or a parameter")]
