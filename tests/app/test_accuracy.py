"""Settings on auto: a step chosen for accuracy, saved points from the plot, the
initial state, the status line, failures logged once, and the CSV header."""

import numpy as np
import pandas as pd
import pytest

import difflab as dl
from difflab.app import accuracy
from difflab.app.lab import Lab
from difflab.app.runs import RunSettings, status_text

LORENZ = dl.models.get("lorenz")


@pytest.fixture(scope="module")
def reference():
    """Lorenz to t = 5 with a tight tolerance: the truth the runs are held to."""
    return dl.simulate(LORENZ(), 5.0, solver="tsit5", rtol=1e-10, atol=1e-12, n_save=5001)


def _error_until(run, reference, until=5.0) -> float:
    ts, ys = np.asarray(run.ts), np.asarray(run.ys)
    keep = ts <= until
    truth = np.column_stack([np.interp(ts[keep], reference.ts, reference.ys[:, j])
                             for j in range(3)])
    return float(np.max(np.abs(ys[keep] - truth)))


@pytest.mark.parametrize("solver", [None, "heun"])
def test_auto_dt_makes_a_long_lorenz_run_accurate(reference, solver):
    settings = RunSettings(t1=50.0, solver=solver)
    run = accuracy.simulate(LORENZ(), settings, points=1600)
    coarse = dl.simulate(LORENZ(), 50.0, solver=solver, dt=0.05)  # the old t1 / 1000
    assert _error_until(coarse, reference) > 0.1
    assert run.ok and run.settings.dt < 0.02
    assert _error_until(run, reference) < 5e-3  # over the first five time units
    assert run.settings.n_save >= 1600  # at least the plot's points
    assert "dt = " in accuracy.chosen(run, settings) and f"{run.settings.n_save} points" in (
        accuracy.chosen(run, settings))
    again = dl.simulate(LORENZ(), **run.settings.kwargs())  # the run records what it took
    np.testing.assert_array_equal(again.ys, run.ys)


def test_the_app_takes_the_engines_automatic_step():
    pendulum = dl.models.get("pendulum")()
    run = accuracy.simulate(pendulum, RunSettings(t1=10.0), points=3000)
    engine = dl.simulate(pendulum, 10.0, n_save=run.settings.n_save, optimize=False)
    assert run.settings.dt == engine.settings.dt == dl.solvers.auto_step(pendulum, 10.0).dt
    np.testing.assert_array_equal(run.ys, engine.ys)


def test_points_for_width_is_two_per_pixel_within_limits():
    assert accuracy.points_for_width(800) == 1600
    assert accuracy.points_for_width(100) == accuracy.MIN_POINTS
    assert accuracy.points_for_width(50_000) == accuracy.MAX_POINTS


def test_runs_start_from_the_initial_state_set_in_the_lab():
    lab = Lab("lorenz")
    lab.set_settings(t1=1.0)
    lab.set_initial("x", 5.0)
    assert lab.initial_state == (5.0, 1.0, 1.0)
    run = lab.solve_now()
    expected = dl.simulate(LORENZ(), 1.0, y0=np.array([5.0, 1.0, 1.0]))
    np.testing.assert_allclose(run.ys, expected.ys, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="no state"):
        lab.set_initial("w", 1.0)
    lab.set_settings(solver="tsit5")
    lab.select_model("ornstein_uhlenbeck")  # its own state; tsit5 cannot take an SDE
    assert lab.settings.y0 is None and lab.settings.solver is None
    assert RunSettings.from_dict({"t1": 2.0, "y0": [1, 2]}).y0 == (1.0, 2.0)
    with pytest.raises(ValueError, match="finite"):
        RunSettings(y0=(1.0, float("nan")))


def test_a_failure_is_logged_once_and_the_status_says_why():
    lab = Lab("lorenz")
    lab.set_settings(solver="euler", dt=1.0, t1=200.0)
    run = lab.solve_now()
    lab.solve_now()
    errors = [text for level, text in lab.messages if level == "error"]
    assert len(errors) == 1 and "diverged" in errors[0]
    status = status_text(run, "lorenz", lab.settings)
    assert status.startswith("lorenz: euler failed:") and "steps" not in status
    lab.set_settings(dt=0.01)
    ok = status_text(lab.solve_now(), "lorenz", lab.settings)
    assert "steps" in ok and "failed" not in ok


def test_exported_csv_opens_with_model_parameters_and_settings(tmp_path):
    run = dl.simulate(LORENZ(rho=15.0), 1.0, dt=0.01, n_save=11)
    path = tmp_path / "run.csv"
    dl.io.export_csv(run, path)
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    assert header[0] == f"# DiffLab {dl.__version__}"
    assert "# model: lorenz" in header and "rho=15.0" in header[2]
    assert "solver=rk4" in header[3] and "dt=0.01" in header[3] and "n_save=11" in header[3]
    table = np.loadtxt(path, delimiter=",", comments="#", skiprows=len(header) + 1)
    np.testing.assert_array_equal(table[:, 1:], run.ys)
    frame = pd.read_csv(path, comment="#")
    assert list(frame.columns) == ["t", "x", "y", "z"]
    np.testing.assert_array_equal(frame["t"], run.ts)
