"""Saving a lab to a session file and opening it again, Qt-free: runs, sweeps, fits,
sensitivities, layout; a save changes only what the lab changed."""

from pathlib import Path

import h5py
import numpy as np
import pytest

import difflab as dl
from difflab.app.fits import FitRequest, run_fit
from difflab.app.lab import Lab
from difflab.app.sensitivities import SensitivityRequest, run_sensitivity
from difflab.app.session_io import open_lab, save_lab
from difflab.app.sweeps import Axis, SweepRequest, SweepView, run_sweep


@pytest.mark.slow
def test_session_round_trip_with_runs_a_sweep_and_the_layout(tmp_path):
    lab = Lab("lorenz")
    lab.set_settings(t1=2.0)
    lab.solve_now()
    lab.keep_current("base")
    lab.set_param("rho", 12.0)
    lab.solve_now()
    lab.set_layout(time_states=("z",), phase_x="x", phase_y="z", view="phase")
    request = SweepRequest(lab.model, "lorenz", (Axis("rho", 1.0, 40.0, 6),
                                                 Axis("beta", 0.5, 5.0, 4, log=True)),
                           "max", "z", lab.settings)
    chunks = []
    sweep = run_sweep(request, lambda data, chunk: chunks.append(chunk.stop))
    assert sweep.result.complete and chunks[-1] == 24 and sweep.grid().shape == (6, 4)
    assert isinstance(sweep.result, dl.SweepResult)  # what the lab keeps: the solvers' class
    lab.add_result("sweep", sweep.result)
    path = tmp_path / "session.h5"
    save_lab(lab, path)
    assert lab.path == path and not lab.dirty

    session = dl.open(path)
    assert sorted(session.runs.names()) == ["base", "current"] and session.sweeps.names() == ["sweep0"]
    assert session.sweeps[0].complete and session.app_settings["model"] == "lorenz"

    other = Lab("pendulum")
    other.set_param("g", 1.0)
    open_lab(other, path)
    assert other.model_name == "lorenz" and other.params["rho"] == 12.0
    assert other.settings.t1 == 2.0 and not other.dirty and not other.undo_stack.can_undo
    assert list(other.runs) == ["base"] and other.runs["base"].model.rho == 28.0
    np.testing.assert_array_equal(other.current.ys, lab.current.ys)
    assert other.layout.time_states == ("z",) and other.layout.view == "phase"
    stored = SweepView.of(other.results["sweep"]["sweep0"], "lorenz")
    np.testing.assert_array_equal(stored.values, sweep.values)
    np.testing.assert_array_equal(stored.result.space["rho"], sweep.result.space["rho"])
    assert stored.axes == request.axes and stored.spec == "max(z)" and stored.result.complete


@pytest.mark.slow
def test_a_stopped_sweep_is_saved_as_incomplete(tmp_path):
    lab = Lab("lorenz")
    request = SweepRequest(lab.model, "lorenz", (Axis("rho", 1.0, 40.0, 64),), "final", "x",
                           lab.settings, chunk_size=16)
    data = run_sweep(request, stop=lambda: True)
    assert not data.result.complete and data.done == 16
    lab.add_result("sweep", data.result)
    save_lab(lab, tmp_path / "stopped.h5")
    assert not dl.open(tmp_path / "stopped.h5").sweeps[0].complete
    other = Lab()
    open_lab(other, tmp_path / "stopped.h5")
    back = SweepView.of(other.results["sweep"]["sweep0"], "lorenz")
    assert back.done == 16 and not back.result.complete
    np.testing.assert_array_equal(back.values[:16], data.values[:16])
    assert np.all(np.isnan(back.grid()[16:]))


def test_opening_a_file_that_is_not_a_session_fails_cleanly(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5 at all")
    lab = Lab()
    lab.set_param("g", 2.0)
    with pytest.raises(dl.io.SessionFileError):
        open_lab(lab, bad)
    assert lab.params["g"] == 2.0  # the session is untouched


@pytest.mark.slow
def test_an_equation_model_comes_back_from_its_text(tmp_path):
    spring = dl.models.from_equations("name: Spring\nparams: k = 1.0 in (0, 10)\n"
                                      "init: x = 1, v = 0\ndx/dt = v\ndv/dt = -k*x\n")
    lab = Lab()
    lab.add_user_model(spring)
    lab.select_model("Spring")
    lab.set_param("k", 4.0)
    lab.solve_now()
    lab.keep_current("stiff")
    save_lab(lab, tmp_path / "spring.h5")
    other = Lab()
    open_lab(other, tmp_path / "spring.h5")
    assert other.model_name == "Spring" and other.params["k"] == 4.0
    assert "Spring" in other.catalog()["user"] and list(other.runs) == ["stiff"]
    np.testing.assert_allclose(other.runs["stiff"]["x"], np.cos(2.0 * other.runs["stiff"].ts),
                               atol=1e-6)
    other.solve_now()  # the rebuilt class simulates like the original
    np.testing.assert_array_equal(other.current.ys, lab.current.ys)


# -- the session as a document: a save touches only what the lab changed ------------------

SPRING = ("name: Spring\nparams: k = 1.0 in (0, 10), c = 0.1 in (0, 2)\ninit: x = 1, v = 0\n"
          "dx/dt = v\ndv/dt = -k*x - c*v\n")
USER_MODEL = Path(__file__).resolve().parents[2] / "examples" / "models" / "pendulum2.py"


def _contents(path) -> dict:
    """Every attribute and every dataset's values in a file, by HDF5 path."""
    out = {}

    def visit(name, obj):
        out[f"{name}:attrs"] = {k: v for k, v in obj.attrs.items()
                                if k not in ("DIMENSION_LIST", "REFERENCE_LIST")}
        if isinstance(obj, h5py.Dataset):
            out[name] = obj[()]

    with h5py.File(path, "r", locking=False) as f:
        visit("", f)
        f.visititems(visit)
    return out


def _assert_kept(before: dict, after: dict, changed=()) -> None:
    """Everything in ``before`` is in ``after``, equal, except under the ``changed`` paths."""
    for key, value in before.items():
        if not key.startswith(tuple(changed)):
            assert key in after, key
            np.testing.assert_equal(after[key], value, err_msg=key)


@pytest.mark.slow
def test_a_sweep_file_keeps_its_sweep_when_the_app_saves_into_it(tmp_path):
    path = tmp_path / "scan.h5"
    lorenz = dl.models.get("lorenz")(beta=2.5)
    made = dl.sweep(lorenz, dl.grid(rho=np.linspace(1.0, 28.0, 6), sigma=[5.0, 10.0]), 0.5,
                    dt=1e-3, solver="rk4", n_save=5, observables={"x_max": "max(x)"}, out=path,
                    name="scan")
    before = _contents(path)
    lab = Lab()
    open_lab(lab, path)
    assert lab.model_name == "lorenz" and not lab.dirty
    shown = SweepView.of(lab.results["sweep"]["scan"], "lorenz")  # not made by the app
    assert [(a.name, a.lo, a.hi, a.n) for a in shown.axes] == [
        ("rho", 1.0, 28.0, 6), ("sigma", 5.0, 10.0, 2)]
    assert shown.spec == "max(x)" and shown.grid().shape == (6, 2) and shown.result.complete
    np.testing.assert_array_equal(shown.values, made.observables["x_max"])
    for rho in (3.0, 4.0):  # the second save replaces what the first wrote
        lab.set_param("rho", rho)
        lab.solve_now()
        save_lab(lab, path)
        assert not lab.dirty
    _assert_kept(before, _contents(path), changed=("app",))
    session = dl.open(path)
    assert session.sweeps.names() == ["scan"] and session.runs.names() == ["current"]
    assert session.stored("runs", "current").model.parameters["rho"] == 4.0
    assert float(session.runs["current"].model.rho) == 4.0
    other = Lab()
    open_lab(other, path)
    assert list(other.results["sweep"]) == ["scan"] and other.params["rho"] == 4.0

    # Save As: the original's objects, the lab's changes; what was at the new path is gone
    copy, pendulum = tmp_path / "copy.h5", dl.models.get("pendulum")()
    with dl.io.write_session(copy) as writer:
        writer.add_run(dl.simulate(pendulum, 1.0), model=pendulum, name="stale")
    original = _contents(path)
    other.keep_current("kept")
    save_lab(other, copy)
    assert other.path == copy and not other.dirty
    _assert_kept(original, _contents(copy), changed=("app",))
    assert sorted(dl.open(copy).runs.names()) == ["current", "kept"]
    assert _contents(path).keys() == original.keys()  # the original is as it was


@pytest.mark.slow
def test_delete_removes_an_object_at_the_next_save_and_undo_brings_it_back(tmp_path):
    lab = Lab()
    lab.set_settings(t1=2.0)
    lab.solve_now()
    lab.keep_current("a")
    lab.keep_current("b")
    request = SweepRequest(lab.model, "pendulum", (Axis("g", 1.0, 10.0, 4),), "max", "theta",
                           lab.settings)
    lab.add_result("sweep", run_sweep(request).result)
    path = tmp_path / "lab.h5"
    save_lab(lab, path)
    before = _contents(path)
    lab.delete("run", "a")
    lab.delete("sweep", "sweep0")
    assert list(lab.runs) == ["b"] and not lab.results["sweep"] and lab.dirty
    save_lab(lab, path)
    session = dl.open(path)
    assert sorted(session.runs.names()) == ["b", "current"] and session.sweeps.names() == []
    assert lab.undo() == "Delete sweep sweep0" and lab.undo() == "Delete run a"
    assert list(lab.runs) == ["a", "b"] and list(lab.results["sweep"]) == ["sweep0"]
    save_lab(lab, path)  # the file lost them at the last save: they are written again
    after = _contents(path)
    session = dl.open(path)
    assert sorted(session.runs.names()) == ["a", "b", "current"]
    assert session.sweeps.names() == ["sweep0"]
    for name in ("runs/a/y", "runs/a/time", "sweeps/sweep0/parameters", "sweeps/sweep0/max_theta"):
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)
    lab.delete("run", "b")  # deleted and brought back before a save: the file keeps it
    lab.undo()
    save_lab(lab, path)
    _assert_kept(after, _contents(path), changed=("app", "provenance"))


@pytest.mark.slow
def test_round_trip_of_a_sweep_a_fit_a_sensitivity_and_an_equation_model(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setenv("DIFFLAB_CONFIG_DIR", str(tmp_path / "config"))  # trusts nothing
    spring = dl.models.from_equations(SPRING)
    lab = Lab()
    lab.add_user_model(spring)
    lab.select_model("Spring")
    lab.set_settings(t1=4.0)
    lab.solve_now()
    lab.keep_current("start")
    lab.add_result("sweep", run_sweep(SweepRequest(
        lab.model, "Spring", (Axis("k", 0.5, 4.0, 5), Axis("c", 0.0, 0.4, 3)), "max", "x",
        lab.settings)).result)
    truth = dl.simulate(spring(k=2.0), 4.0, n_save=21)
    data = dl.io.Observations(np.asarray(truth.ts), np.asarray(truth.ys), truth.state_names)
    fit = run_fit(FitRequest(lab.model, "Spring", data, ("k",), lab.settings,
                             max_steps=30)).fit
    assert fit.ok and fit.dof == 2 * 21 - 1 and abs(fit.params["k"] - 2.0) < 1e-4
    lab.add_result("fit", fit)
    lab.add_result("sensitivity", run_sensitivity(SensitivityRequest(
        lab.model, "Spring", lab.settings, ("k", "c"))))
    path = tmp_path / "lab.h5"
    save_lab(lab, path)
    driven = dl.models.load_file(USER_MODEL)["DrivenPendulum"]()
    with dl.io.write_session(path) as writer:  # objects the app cannot show: kept as they are
        writer.add_sensitivity(model=spring(), parameter_names=["k"], gradient=[0.5],
                               name="gradient")
        writer.add_run(dl.simulate(driven, 1.0), model=driven, name="driven")
    first = _contents(path)

    again = Lab()
    open_lab(again, path)
    assert again.model_name == "Spring" and again.model_class("Spring").equations == SPRING
    assert list(again.runs) == ["start", "driven"]
    assert isinstance(again.runs["driven"].model, dl.io.ModelRecord)  # its code never ran
    assert [list(again.results[k]) for k in ("sweep", "fit", "sensitivity")] == [
        ["sweep0"], ["fit0"], ["sensitivity0"]]
    back = again.results["fit"]["fit0"]
    assert isinstance(back, dl.FitResult)
    assert (back.result, back.message, back.params, back.stderr, back.chi2, back.dof) == (
        fit.result, fit.message, fit.params, fit.stderr, fit.chi2, fit.dof)
    np.testing.assert_array_equal(back.covariance, fit.covariance)
    again.set_param("c", 0.2)
    again.solve_now()
    again.keep_current("damped")
    save_lab(again, path)
    second = _contents(path)
    _assert_kept(first, second, changed=("app", "runs/current"))
    assert "runs/damped/y" in second and "sensitivities/gradient/gradient" in second

    last = Lab()
    open_lab(last, path)
    assert last.model_name == "Spring" and last.params["c"] == 0.2
    assert list(last.runs) == ["start", "driven", "damped"]
    for name, run in again.runs.items():
        np.testing.assert_array_equal(last.runs[name].ys, run.ys)
        np.testing.assert_array_equal(last.runs[name].ts, run.ts)
    np.testing.assert_array_equal(last.current.ys, again.current.ys)
    sweep, sweep_back = again.results["sweep"]["sweep0"], last.results["sweep"]["sweep0"]
    for field in ("y", "result", "steps", "ts"):
        np.testing.assert_array_equal(getattr(sweep_back, field), getattr(sweep, field))
    np.testing.assert_array_equal(sweep_back.observables["max_x"], sweep.observables["max_x"])
    assert SweepView.of(sweep_back, "Spring").axes == SweepView.of(sweep, "Spring").axes
    fit_back = last.results["fit"]["fit0"]
    np.testing.assert_array_equal(fit_back.loss_history, fit.loss_history)
    np.testing.assert_array_equal(fit_back.parameter_history, fit.parameter_history)
    assert (fit_back.stderr, fit_back.chi2) == (fit.stderr, fit.chi2)
    sens, sens_back = (lab.results["sensitivity"]["sensitivity0"],
                       last.results["sensitivity"]["sensitivity0"])
    np.testing.assert_array_equal(sens_back.raw, sens.raw)
    assert sens_back.parameters == sens.parameters


def test_an_object_read_from_the_file_comes_back_whole_after_a_save_removed_it(tmp_path):
    """Deleted, saved (its groups leave the file), undone, saved: the fit's run, read
    lazily from the file, was kept in memory before the removal and is written again."""
    lab = Lab()
    lab.set_settings(t1=2.0)
    truth = dl.simulate(lab.model, 2.0, n_save=11)
    data = dl.io.Observations(np.asarray(truth.ts), np.asarray(truth.ys), truth.state_names)
    lab.add_result("fit", run_fit(FitRequest(lab.model, "pendulum", data, ("g",), lab.settings,
                                             max_steps=5)).fit)
    path = tmp_path / "lab.h5"
    save_lab(lab, path)
    with h5py.File(path, "r") as f:
        stored = f["runs/fit0_run/y"][()]
    reopened = Lab()
    open_lab(reopened, path)
    reopened.delete("fit", "fit0")
    save_lab(reopened, path)
    assert dl.open(path).fits.names() == []
    reopened.undo()
    save_lab(reopened, path)
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["runs/fit0_run/y"][()], stored)


def test_a_session_with_a_field_run_opens_and_a_save_keeps_the_field(tmp_path):
    model = dl.models.get("diffusion")(D=0.1).with_points((8,))
    path = tmp_path / "fields.h5"
    dl.io.save_fields(path, dl.simulate(model, 1.0, n_save=3), model, name="heat")
    lab = Lab("lorenz")
    open_lab(lab, path)
    assert "heat" not in lab.runs and lab.field_session.model_name == "diffusion"
    assert any("field run 'heat'" in text for _, text in lab.messages)
    lab.set_settings(t1=1.0)
    lab.solve_now()
    lab.keep_current("kept")
    save_lab(lab, path)
    field = dl.open(path).runs["heat"]
    np.testing.assert_array_equal(field["u"][-1], dl.simulate(model, 1.0, n_save=3)["u"][-1])
