"""The Qt-free lab: parameter edits and their undo, runs, layout, events (no display needed)."""

import numpy as np
import pytest

import difflab as dl
from difflab.app.lab import Lab, PlotLayout
from difflab.app.runs import RunSettings, complete, solve, stream_run


@pytest.fixture
def lab():
    return Lab("pendulum")


def test_events_announce_parameter_edits_and_undo_restores_them(lab):
    seen = []
    lab.events.params.connect(lambda e: seen.append(dict(e.changed)))
    lab.set_param("g", 3.7)
    lab.set_param("length", 2.0)
    assert seen == [{"g": 3.7}, {"length": 2.0}] and lab.dirty
    assert lab.undo() == "Set length = 2"
    assert lab.params == {"g": 3.7, "length": 1.0, "theta0": 1.0}
    assert lab.undo() == "Set g = 3.7" and lab.params["g"] == 9.81
    assert lab.undo() is None
    assert lab.redo() == "Set g = 3.7" and lab.params["g"] == 3.7
    assert seen[-1] == {"g": 3.7}


def test_edits_with_one_merge_key_undo_as_one_step(lab):
    for g in (5.0, 6.0, 7.0):
        lab.set_param("g", g, merge_key="drag-1")
    lab.set_param("g", 8.0, merge_key="drag-2")
    assert len(lab.undo_stack) == 2
    lab.undo()
    assert lab.params["g"] == 7.0
    lab.undo()
    assert lab.params["g"] == 9.81


def test_a_new_edit_clears_redo_and_bad_edits_are_refused(lab):
    lab.set_param("g", 5.0)
    lab.undo()
    lab.set_param("length", 3.0)
    assert not lab.undo_stack.can_redo
    with pytest.raises(ValueError, match="has no parameter 'G'"):
        lab.set_param("G", 1.0)
    with pytest.raises(ValueError, match="finite"):
        lab.set_param("g", float("nan"))


def test_model_switch_is_undoable_and_fits_the_layout(lab):
    models = []
    lab.events.model.connect(lambda e: models.append(e.name))
    lab.set_param("g", 2.0)
    lab.select_model("lorenz")
    assert lab.model_name == "lorenz" and lab.params["rho"] == 28.0 and lab.current is None
    assert lab.layout == PlotLayout(("x", "y", "z"), "x", "y", "time", ("x", "y", "z"))
    lab.set_param("rho", 10.0)
    lab.undo()
    lab.undo()
    assert lab.model_name == "pendulum" and lab.params["g"] == 2.0
    assert lab.layout.time_states == ("theta", "omega")
    lab.redo()
    assert lab.model_name == "lorenz" and models == ["lorenz", "pendulum", "lorenz"]


def test_solve_now_equals_simulate_and_stale_results_are_ignored(lab):
    lab.set_settings(t1=5.0, solver="heun")
    old = lab.solve_request()
    lab.set_param("g", 4.0)
    run = lab.solve_now()
    expected = dl.simulate(dl.models.get("pendulum")(g=4.0), 5.0, solver="heun",
                           optimize=False)  # the app's programs compile quickly
    np.testing.assert_array_equal(run.ys, np.asarray(expected.ys))
    assert not lab.accept(solve(old), old)  # an older request's run arrives late
    assert lab.current is run
    assert isinstance(run, dl.Trajectory) and run.settings.solver == "heun"  # one run class


@pytest.mark.slow
def test_kept_runs_are_named_renamed_hidden_and_removed(lab):
    with pytest.raises(ValueError, match="no current run"):
        lab.keep_current()
    lab.solve_now()
    assert lab.keep_current() == "run0"
    lab.set_param("g", 1.0)
    lab.solve_now()
    assert lab.keep_current("moon") == "moon"
    with pytest.raises(ValueError, match="already exists"):
        lab.rename_run("run0", "moon")
    with pytest.raises(ValueError, match="invalid run name"):
        lab.rename_run("run0", "9 lives")
    lab.rename_run("run0", "earth")
    lab.set_run_visible("moon", False)
    assert list(lab.runs) == ["earth", "moon"] and not lab.is_visible("moon")
    assert lab.runs["earth"].model.g == 9.81 and lab.runs["moon"].model.g == 1.0
    assert lab.app_settings()["visible"] == {"earth": True, "moon": False}
    lab.delete("run", "earth")
    assert list(lab.runs) == ["moon"]
    assert lab.undo() == "Delete run earth" and list(lab.runs) == ["earth", "moon"]


@pytest.mark.slow
def test_a_stopped_stream_keeps_the_points_it_computed():
    lab = Lab("lorenz")
    lab.set_settings(t1=10.0, n_save=1001)
    request = lab.solve_request()
    chunks = 0

    def stop():
        return chunks >= 3

    for run, _ in stream_run(request, chunk_size=100, stop=stop):
        chunks += 1
        lab.accept(run, request)
    # the first chunk is the initial state, then 100 points a chunk
    assert len(lab.current.ts) == 201 and not complete(lab.current)
    full = dl.simulate(dl.models.get("lorenz")(), 10.0, n_save=1001)
    np.testing.assert_allclose(lab.current.ys[:201], np.asarray(full.ys)[:201], rtol=1e-12)
    assert lab.keep_current("partial") == "partial" and len(lab.runs["partial"].ts) == 201


def test_a_failed_run_is_logged_with_model_point_and_reason():
    lab = Lab("lorenz")
    lab.set_settings(solver="euler", dt=1.0, t1=200.0)
    run = lab.solve_now()
    assert not run.ok
    level, text = lab.messages[-1]
    assert level == "error"
    assert text.startswith("lorenz (sigma=10, rho=28, beta=2.66667) failed after t = ")
    assert "with euler: the state became infinite or NaN" in text


def test_run_settings_check_their_values():
    with pytest.raises(ValueError, match="t1"):
        RunSettings(t1=0.0)
    with pytest.raises(ValueError, match="dt must be positive"):
        RunSettings(dt=-1.0)
    with pytest.raises(ValueError, match="unknown solver 'rk5'"):
        RunSettings(solver="rk5")
    settings = RunSettings(t1=3.0, dt=0.01, solver="rk4", n_save=11, seed=4)
    assert RunSettings.from_dict({**settings.as_dict(), "extra": 1}) == settings


def test_an_observer_that_raises_is_reported_not_fatal(lab):
    lab.events.params.connect(lambda e: 1 / 0)
    lab.set_param("g", 2.0)
    assert lab.params["g"] == 2.0
    assert lab.messages[-1][0] == "error" and "ZeroDivisionError" in lab.messages[-1][1]
