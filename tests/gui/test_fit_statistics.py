"""The fit panel's statistics: a linear fit whose answer NumPy's least squares gives.

``dy/dt = a + b t`` from ``y(0) = 0`` is ``y = a t + b t^2 / 2``, linear in ``a`` and
``b``: chi-square, reduced chi-square, the correlation of the estimates and the residuals
the panel shows must be those of ``numpy.linalg.lstsq``.
"""

import jax.numpy as jnp
import numpy as np
import pytest

import difflab as dl
from difflab.app.lab import Lab
from difflab.gui.fit_panel import FitPanel

from .conftest import LONG

T = np.linspace(0.1, 4.0, 30)
SIGMA = 0.05


class Ramp(dl.Model):
    """dy/dt = a + b t."""

    a: float = dl.param(0.5, bounds=(-10.0, 10.0))
    b: float = dl.param(0.1, bounds=(-10.0, 10.0))
    state_names = ("y",)

    def vector_field(self, t, y):
        return jnp.stack([self.a + self.b * t])

    def initial_state(self):
        return jnp.array([0.0])


def ramp_lab() -> Lab:
    lab = Lab()
    lab.select_model(lab.add_user_model(Ramp, "ramp"))
    lab.set_settings(solver="rk4", dt=0.01)
    return lab


def observations() -> dl.io.Observations:
    y = 1.3 * T - 0.2 * T**2 + SIGMA * np.random.default_rng(1).standard_normal(T.shape)
    return dl.io.Observations(T, y[:, None], ("y",))


def least_squares(y, sigma):
    design = np.column_stack([T, T**2 / 2])
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - design @ beta
    chi2 = float(residuals @ residuals) / sigma**2
    cov = np.linalg.inv(design.T @ design) * sigma**2
    if sigma == 1.0:
        cov *= chi2 / (len(T) - 2)
    sd = np.sqrt(np.diag(cov))
    return chi2, sd, cov[0, 1] / (sd[0] * sd[1]), residuals


def run_panel_fit(qtbot, panel, sigma_text=""):
    panel.set_data(observations())
    panel.sigma.setText(sigma_text)
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.start()
    return blocker.args[0]


@pytest.mark.parametrize("sigma_text", ["0.05", ""])
def test_panel_shows_the_statistics_of_a_linear_fit(qtbot, sigma_text):
    lab = ramp_lab()
    panel = FitPanel(lab)
    qtbot.addWidget(panel)
    fitted = run_panel_fit(qtbot, panel, sigma_text)
    chi2, sd, corr, residuals = least_squares(observations().y[:, 0],
                                              float(sigma_text or 1.0))
    text = panel.statistics.summary.text()
    assert f"χ² = {chi2:.4g} for 30 values, 28 degrees of freedom" in text
    assert f"reduced χ² = {chi2 / 28:.4g}" in text
    assert ("noise unknown" in text) is (sigma_text == "")
    assert fitted.absolute_sigma is (sigma_text != "")
    table = panel.statistics.correlation
    assert (table.rowCount(), table.columnCount()) == (2, 2)
    assert table.item(0, 0).text() == "+1.000"
    assert float(table.item(0, 1).text()) == pytest.approx(corr, abs=2e-3)
    assert [float(panel.table.item(i, 2).text()) for i in range(2)] == pytest.approx(sd, rel=0.01)
    t, r = panel.residuals.series["y"].getData()
    np.testing.assert_allclose(t, T)
    np.testing.assert_allclose(r, residuals, atol=1e-7)


def test_switching_models_clears_the_fit_and_a_bad_sigma_is_refused(qtbot):
    lab = ramp_lab()
    panel = FitPanel(lab)
    qtbot.addWidget(panel)
    run_panel_fit(qtbot, panel, "0.05")
    assert panel.table.rowCount() == 2 and panel.residuals.series
    lab.select_model("lorenz")
    assert panel.record is None and panel.table.rowCount() == 0
    assert panel.statistics.summary.text() == "" and not panel.residuals.series
    assert not panel.model_items and not panel.apply_button.isEnabled()
    lab.select_model("ramp")
    panel.sigma.setText("noisy")
    panel.start()
    assert panel.worker is None
    assert lab.messages[-1] == ("error", "fit: the noise sigma must be a number, not 'noisy'")
    panel.sigma.setText("-1")
    panel.start()
    assert panel.worker is None and "must be a positive number" in lab.messages[-1][1]


class Product(dl.Model):
    """dy/dt = -a b y: the data determine only a*b."""

    a: float = dl.param(0.5, bounds=(0.01, 10.0))
    b: float = dl.param(1.5, bounds=(0.01, 10.0))
    state_names = ("y",)

    def vector_field(self, t, y):
        return -self.a * self.b * y

    def initial_state(self):
        return jnp.array([1.0])


def test_panel_names_what_the_data_do_not_determine(qtbot):
    lab = Lab()
    lab.select_model(lab.add_user_model(Product, "product"))
    lab.set_settings(solver="rk4", dt=0.01)
    panel = FitPanel(lab)
    qtbot.addWidget(panel)
    y = np.exp(-0.6 * T) + SIGMA * np.random.default_rng(2).standard_normal(T.shape)
    panel.set_data(dl.io.Observations(T, y[:, None], ("y",)))
    panel.sigma.setText(str(SIGMA))
    with qtbot.waitSignal(panel.finished, timeout=LONG) as blocker:
        panel.start()
    fitted = blocker.args[0]
    assert fitted.ok and not fitted.good
    for text in (panel.status.text(), panel.statistics.summary.text()):
        assert "only a*b is determined" in text, text
    assert panel.status.text().startswith("converged; χ² = ")
    table = panel.statistics.correlation
    assert table.item(0, 1).text() == "-1.000" and table.item(1, 0).text() == "-1.000"
    assert [panel.table.item(i, 2).text() for i in range(2)] == ["not determined"] * 2
    level, text = lab.messages[-1]
    assert level == "warning" and "only a*b is determined" in text
