"""Every built-in model on every tab, with the settings a new user gets (the bifurcation
over its first parameter's whole slider range, the time series at both ends of every
parameter's slider): each view draws something finite in a finite view, or a message on
the panel says why not. Then the same again after every view
has shown a degenerate result (a constant branch, NaN, a single point), so no range or
state leaks from one computation to the next. Then the bifurcation diagram of every ODE
model over each of its parameters' whole slider range (``-m exhaustive``; a few of them
in every run). One window and one compile per model."""

import time

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSettings

import difflab as dl
from difflab.app.lab import finite_bounds
from difflab.gui.plots import view_is_valid

from .conftest import LONG
from .test_degenerate_views import flat_diagram

MODELS = sorted(dl.models.available())
ODE_MODELS = [n for n in MODELS if not issubclass(dl.models.get(n), dl.SDEModel)]
# Two branches (one found at the end of the range), a parameter of the initial state only
# (the same equilibria all along), a model whose equilibria are a line (the panel says
# in words why there is no diagram):
QUICK_BIFURCATIONS = (("lotka_volterra", "gamma"), ("lotka_volterra", "predator0"),
                      ("sir", "gamma"))
RUN_VIEWS = ("time", "phase", "phase3d", "field")
TIMES: dict[str, float] = {}
STEPS: dict = {}


@pytest.fixture(scope="module")
def matrix_window(qapp, tmp_path_factory):
    from difflab.gui.main_window import MainWindow

    path = tmp_path_factory.mktemp("matrix") / "difflab.ini"
    window = MainWindow(settings=QSettings(str(path), QSettings.Format.IniFormat))
    window.files.ask_unsaved = lambda: "discard"
    window.resize(1400, 900)
    window.show()
    yield window
    window.shutdown()
    window.close()
    print("\nview matrix: " + ", ".join(f"{k} {v:.1f} s" for k, v in TIMES.items()))
    for k, v in sorted(STEPS.items(), key=lambda kv: -kv[1])[:30]:
        print(k, round(v, 2))


def finite_items(item: pg.PlotItem) -> list:
    """The items of a plot with at least one finite data point."""
    out = []
    for thing in item.getViewBox().addedItems:
        if not thing.isVisible():
            continue
        if isinstance(thing, pg.ImageItem) and thing.image is not None:
            data = np.asarray(thing.image, dtype=float)
        elif hasattr(thing, "getData"):
            x, y = thing.getData()
            if x is None or y is None or not len(x):
                continue
            data = np.asarray(x, dtype=float) + np.asarray(y, dtype=float)
        else:
            continue
        if np.isfinite(data).any():
            out.append(thing)
    return out


def plots_of(view) -> list[pg.PlotItem]:
    plot = view.plot
    if isinstance(plot, pg.GraphicsLayoutWidget):
        return [view.image_plot, view.profile_plot]
    return [plot.getPlotItem()]


def check_drawn(qtbot, window, key: str, message: str = "") -> None:
    """``key``'s view draws finite data in a valid range, or ``message`` says why not."""
    view = window.views[key]
    qtbot.wait(30)
    for item in plots_of(view):
        assert view_is_valid(item), (window.lab.model_name, key, item.getViewBox().viewRange())
        drawn = finite_items(item)
        assert drawn or message, f"{window.lab.model_name}: {key} draws nothing and says nothing"


def select(qtbot, window, name: str) -> None:
    window.lab.select_model(name)
    qtbot.waitUntil(lambda: window.lab.current is not None
                    and window.lab.name_of(window.lab.current.model) == name, timeout=LONG)


def show(qtbot, window, key: str):
    view = window.views[key]
    window.tabs.setCurrentWidget(view)
    qtbot.wait(20)
    return view


def wait_task(qtbot, view, attr="task") -> None:
    task = getattr(view, attr)
    qtbot.waitUntil(lambda: not task.busy, timeout=LONG)
    qtbot.wait(20)


def run_views(qtbot, window) -> None:
    for key in RUN_VIEWS:
        if key == "phase3d" and len(window.lab.state_names) < 3:
            continue
        if key == "field" and window.tabs.indexOf(window.views[key]) < 0:
            continue
        show(qtbot, window, key)
        check_drawn(qtbot, window, key)


def at(lab, name: str, value: float) -> bool:
    """Whether the current run is of the model with parameter ``name`` at ``value``."""
    return lab.current is not None and np.isclose(float(getattr(lab.current.model, name)),
                                                  value, rtol=1e-6, atol=0.0)


def failed(lab, before) -> str:
    """The error logged since the message ``before``, if any."""
    last = lab.messages[-1] if lab.messages else None
    return last[1] if last is not None and last is not before and last[0] == "error" else ""


def each_parameter(qtbot, window) -> None:
    """Every parameter at both ends of its slider range: the time series draws the run,
    or the failure the log names; then the defaults again."""
    lab = window.lab
    show(qtbot, window, "time")
    for name, spec in lab.specs.items():
        for value in finite_bounds(spec):
            before = lab.messages[-1] if lab.messages else None
            lab.set_param(name, value)
            qtbot.waitUntil(lambda: at(lab, name, value) or bool(failed(lab, before)),
                            timeout=LONG)
            failure = failed(lab, before) or ("" if lab.current.ok else lab._last_failure)
            check_drawn(qtbot, window, "time", failure)
        lab.set_param(name, spec.default)
        qtbot.waitUntil(lambda: at(lab, name, spec.default), timeout=LONG)


def phase_plane(qtbot, window) -> None:
    view = show(qtbot, window, "phase_plane")
    if len(window.lab.state_names) < 2:
        check_drawn(qtbot, window, "phase_plane", view.status.text())
        return
    qtbot.waitUntil(lambda: not view._stale or view.task.busy, timeout=LONG)
    wait_task(qtbot, view)
    check_drawn(qtbot, window, "phase_plane", "failed" in view.status.text() and
                view.status.text())


def bifurcation(qtbot, window, param: str = "") -> None:
    """The diagram over ``param`` (the first parameter by default), from and to the ends
    of its slider as a new user finds them: drawn, or the failure said in words."""
    view = show(qtbot, window, "bifurcation")
    if param:
        view.param.setCurrentText(param)
    spec = window.lab.specs[view.param.currentText()]
    assert np.allclose((view.start.value(), view.stop.value()), finite_bounds(spec),
                       rtol=1e-9, atol=1e-12)
    view.compute_button.click()
    wait_task(qtbot, view)
    text = view.status.text()
    assert "continuing" not in text, text  # the panel says how it ended
    check_drawn(qtbot, window, "bifurcation", "failed" in text and "Try" in text and text)


def every_bifurcation(qtbot, window, name: str, params=None) -> None:
    """The diagram of model ``name`` over each of ``params`` (default: all of them)."""
    select(qtbot, window, name)
    for param in params or window.lab.specs:
        t = time.perf_counter()
        bifurcation(qtbot, window, param)
        STEPS[(name, f"bifurcation over {param}")] = time.perf_counter() - t


def sensitivity(qtbot, window) -> None:
    view = show(qtbot, window, "sensitivity")
    with qtbot.waitSignal(view.finished, timeout=LONG, raising=False):
        view.compute_button.click()
    qtbot.waitUntil(lambda: view.worker is None, timeout=LONG)
    text = view.status.text()
    check_drawn(qtbot, window, "sensitivity", ("failed" in text or "nothing" in text) and text)


def fit(qtbot, window) -> None:
    view = show(qtbot, window, "fit")
    assert view.data is not None or "no data" in view.data_label.text()


def degenerate(qtbot, window) -> None:
    """Show a degenerate result in every view: a constant, a NaN curve, a single point."""
    for key, view in window.views.items():
        if window.tabs.indexOf(view) < 0 or key == "field" or not hasattr(view, "plot"):
            continue
        show(qtbot, window, key)
        for item in plots_of(view):
            junk = [item.plot([0.0, 1.0], [3.0, 3.0]), item.plot([np.nan], [np.nan]),
                    item.plot([2.0], [2.0], symbol="o")]
            item.enableAutoRange()
            qtbot.wait(30)
            assert view_is_valid(item), key
            for thing in junk:
                item.removeItem(thing)
    view = window.views["bifurcation"]
    view._done(flat_diagram(window.lab)) if window.lab.model_name == "lorenz" else None


FULL = (select, run_views, each_parameter, phase_plane, bifurcation, sensitivity, fit)
AGAIN = (select, run_views, phase_plane, bifurcation)  # the views that keep a range


def run_matrix(qtbot, window, label: str, steps=FULL) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    for name in MODELS:
        for step in steps:
            t = time.perf_counter()
            step(qtbot, window, name) if step is select else step(qtbot, window)
            STEPS[(name, step.__name__)] = STEPS.get((name, step.__name__), 0) + \
                time.perf_counter() - t
    TIMES[label] = time.perf_counter() - start
    TIMES[label + " (cpu)"] = time.process_time() - cpu


@pytest.mark.slow  # about 70 s, then 15 s, on 2 busy cores: see the report
def test_every_view_of_every_model_draws_or_says_why(qtbot, matrix_window):
    run_matrix(qtbot, matrix_window, "first pass")


@pytest.mark.slow
def test_the_matrix_again_after_degenerate_results(qtbot, matrix_window):
    select(qtbot, matrix_window, "lorenz")
    degenerate(qtbot, matrix_window)
    run_matrix(qtbot, matrix_window, "after degenerate results", AGAIN)


@pytest.mark.slow
@pytest.mark.exhaustive  # minutes: periodic orbits from every Hopf point of every parameter
@pytest.mark.parametrize("name", ODE_MODELS)
def test_a_bifurcation_over_every_parameter_draws_or_says_why(qtbot, matrix_window, name):
    every_bifurcation(qtbot, matrix_window, name)


def test_bifurcations_over_a_few_parameters_draw_or_say_why(qtbot, matrix_window):
    for name, param in QUICK_BIFURCATIONS:
        every_bifurcation(qtbot, matrix_window, name, [param])
