"""One typed expression over given names: the equations' allow-list, elementwise values."""

import numpy as np
import pytest

import difflab as dl


def test_a_formula_is_computed_elementwise_over_arrays():
    f = dl.models.compile_formula("where(x > 0, hypot(x, y), -pi) + k", ["x", "y", "k"])
    x, y = np.array([3.0, -1.0, 5.0]), np.array([4.0, 2.0, 12.0])
    np.testing.assert_allclose(f({"x": x, "y": y, "k": 1.0}), [6.0, 1.0 - np.pi, 14.0])


@pytest.mark.parametrize("text, column, message", [
    ("x + yy", 5, "unknown name 'yy'; did you mean y"),
    ("x +* y", 4, "syntax error"),
    ("x.__class__", 1, "attribute access"),
    ("(lambda: 1)()", 2, "lambda is not allowed"),
    ("x" * 1_001, 1_001, "too long"),
])
def test_a_bad_formula_names_its_column(text, column, message):
    with pytest.raises(dl.models.EquationError, match=message) as caught:
        dl.models.compile_formula(text, ["x", "y"])
    assert caught.value.problems[0].column == column and caught.value.problems[0].line == 1
