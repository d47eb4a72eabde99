"""Render screenshots of the app's main views into ``docs/screenshots/`` (for the README).

    python scripts/screenshots.py            # under Xvfb (re-runs itself with xvfb-run)
    python scripts/screenshots.py --out DIR
    python scripts/screenshots.py --only fit field dark_theme

Each view is set up through the same objects a user drives (the lab, the panels), the
work runs on the app's worker threads, and the window is grabbed once it has drawn.
Needs the ``gui`` extra and, without a display, ``xvfb-run`` (apt-get install xvfb).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIZE = (1440, 880)


def _reexec_under_xvfb() -> None:
    if os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM") or os.environ.get(
            "DIFFLAB_SCREENSHOTS_CHILD"):
        return
    if shutil.which("xvfb-run") is None:
        sys.exit("screenshots: no display and no xvfb-run (sudo apt-get install xvfb)")
    env = {**os.environ, "DIFFLAB_SCREENSHOTS_CHILD": "1"}
    command = ["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", sys.executable, *sys.argv]
    sys.exit(subprocess.call(command, env=env))


def _wait(app, condition, timeout=300.0) -> None:
    from PySide6.QtCore import QEventLoop

    end = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("the app did not get there in time")
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        time.sleep(0.01)


def _settle(app, seconds=0.6) -> None:
    """Let the window finish drawing."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.02)


def _solved(window, **params):
    from difflab.app.runs import complete, params_of

    lab, run = window.lab, window.lab.current
    if run is None or not complete(run) or lab.name_of(run.model) != lab.model_name:
        return False
    values = params_of(run.model)
    return all(abs(values.get(k, np.nan) - v) < 1e-12 for k, v in params.items())


def _set(app, window, **params):
    window.lab.set_params(params)
    _wait(app, lambda: _solved(window, **params))


def _shoot(app, window, out: Path, name: str) -> None:
    _settle(app)
    path = out / f"{name}.png"
    window.grab().save(str(path))
    print(f"wrote {path}")


def time_series_and_phase(app, window, out: Path) -> None:
    lab = window.lab
    lab.select_model("pendulum")
    lab.set_settings(t1=12.0)
    for theta0, name in ((0.6, "small_swing"), (2.2, "large_swing")):
        _set(app, window, theta0=theta0)
        lab.keep_current(name)
    _set(app, window, theta0=3.0)
    lab.set_layout(time_states=("theta", "omega"), phase_x="theta", phase_y="omega", view="time")
    _shoot(app, window, out, "time-series")
    lab.set_layout(view="phase")
    _shoot(app, window, out, "phase-portrait")


def sweep(app, window, out: Path) -> None:
    lab = window.lab
    lab.select_model("lorenz")
    lab.set_settings(t1=20.0)
    _wait(app, lambda: _solved(window) and lab.current.settings.t1 == 20.0)
    panel = window.views["sweep"]
    lab.set_layout(view="sweep")
    panel.axis1.name.setCurrentText("rho")
    panel.axis1.lo.setValue(0.0)
    panel.axis1.hi.setValue(60.0)
    panel.axis1.n.setValue(90)
    panel.two_d.setChecked(True)
    panel.axis2.name.setCurrentText("sigma")
    panel.axis2.lo.setValue(1.0)
    panel.axis2.hi.setValue(30.0)
    panel.axis2.log.setChecked(False)
    panel.axis2.n.setValue(60)
    panel.reduction.setCurrentText("std")
    panel.state.setCurrentText("x")
    finished = []
    panel.finished.connect(finished.append)
    panel.start()
    _wait(app, lambda: finished)
    from difflab.app.sweeps import SweepView

    data = SweepView.of(finished[0], lab.model_name)
    point = data.nearest(28.0, 10.0)  # near the classic rho = 28, sigma = 10: chaos
    panel.select_point(point)
    _wait(app, lambda: _solved(window, **data.point(point)))
    _shoot(app, window, out, "sweep")


def orbit_diagram(app, window, out: Path) -> None:
    """Rossler's route to chaos: the maxima of x after a transient, over c from 2 to 6."""
    import difflab as dl

    lab = window.lab
    rossler = dl.models.load_equations(Path(__file__).resolve().parents[1] / "examples"
                                       / "models" / "rossler.eqn")
    name = lab.add_user_model(rossler)
    lab.select_model(name)
    lab.set_settings(t1=600.0, dt=0.01, solver="rk4")
    _wait(app, lambda: lab.current is not None and lab.name_of(lab.current.model) == name)
    panel = window.views["sweep"]
    lab.set_layout(view="sweep")
    panel.two_d.setChecked(False)
    panel.axis1.name.setCurrentText("c")
    panel.axis1.lo.setValue(2.0)
    panel.axis1.hi.setValue(6.0)
    panel.axis1.n.setValue(400)
    panel.reduction.setCurrentText("maxima")
    panel.state.setCurrentText("x")
    panel.after.setValue(300.0)
    finished = []
    panel.finished.connect(finished.append)
    panel.start()
    _wait(app, lambda: finished)
    _shoot(app, window, out, "orbit-diagram")


def fit(app, window, out: Path) -> None:
    import difflab as dl

    lab = window.lab
    lab.select_model("lotka_volterra")
    lab.set_settings(t1=15.0)
    lv = dl.models.get("lotka_volterra")
    traj = dl.simulate(lv(alpha=1.0, beta=0.3), 15.0, n_save=61)
    observed = dl.io.Observations(np.asarray(traj.ts), np.asarray(traj.ys), traj.state_names)
    path = Path(tempfile.mkdtemp()) / "observations.csv"
    dl.io.write_observations_csv(path, observed.with_noise(0.4, seed=7))
    panel = window.views["fit"]
    lab.set_layout(view="fit")
    _set(app, window, alpha=0.8, beta=0.25)  # a start the user picked by eye
    panel.load_data(str(path))
    panel.set_chosen(["alpha", "beta"])
    finished = []
    panel.finished.connect(finished.append)
    panel.start()
    _wait(app, lambda: finished)
    _shoot(app, window, out, "fit")
    view = window.views["sensitivity"]
    lab.set_layout(view="sensitivity")
    done = []
    view.finished.connect(done.append)
    view.compute()
    _wait(app, lambda: done)
    view.state.setCurrentText("predator")
    _shoot(app, window, out, "sensitivity")


def field(app, window, out: Path) -> None:
    """heat1d on a line of 64 cells to t = 2: sin(pi x) decaying between walls at zero."""
    view = _fields_tab(app, window, "heat1d", 64, 1, 2.0)
    view.scrubber.setValue(view.scrubber.maximum() // 4)
    _shoot(app, window, out, "field")
    _fields_done(window, view)


def phase3d(app, window, out: Path) -> None:
    """Lorenz's attractor in the 3-D phase view, a run at a lower rho kept beside it."""
    lab = window.lab
    lab.select_model("lorenz")
    lab.set_settings(t1=40.0)
    _set(app, window, rho=20.0)
    lab.keep_current("rho_20")
    _set(app, window, rho=28.0)
    lab.set_layout(view="phase3d")
    _shoot(app, window, out, "phase3d")


def dark_theme(app, window, out: Path) -> None:
    lab = window.lab
    lab.select_model("kuramoto")
    lab.set_settings(t1=20.0)
    _wait(app, lambda: _solved(window) and lab.current.settings.t1 == 20.0)
    lab.set_layout(time_states=("theta0", "theta50", "theta99"), view="time")
    window.time_plot.show_derived("order parameter r", True)
    window.time_plot.add_expression("sin(theta0 - theta50)")  # typed by the user
    window.set_theme(True)
    _shoot(app, window, out, "dark-theme")
    window.set_theme(False)


def bifurcation(app, window, out: Path, model="lorenz", param="rho", span=(0.0, 30.0),
                state="x") -> None:
    """The equilibria and the periodic orbits born at the Hopf points, against a parameter."""
    lab = window.lab
    lab.select_model(model)
    _wait(app, lambda: _solved(window))
    view = window.views["bifurcation"]
    window.tabs.setCurrentWidget(view)
    view.param.setCurrentText(param)
    view.state.setCurrentText(state)
    view.start.setValue(span[0])
    view.stop.setValue(span[1])
    finished = []
    view.finished.connect(finished.append)
    view.compute()
    _wait(app, lambda: finished)
    _shoot(app, window, out, "bifurcation")


def _fields_tab(app, window, name: str, points: int, ndim: int, t1: float, **params):
    """The Fields tab running ``name`` on ``points`` per axis of ``ndim`` axes to ``t1``,
    the window's docks closed (the tab has its own model and parameters)."""
    for dock in window.docks.values():
        dock.hide()
    tab = window.views["fields"]
    window.tabs.setCurrentWidget(tab)
    view = tab.view
    view.choose_model(name, points, ndim)
    view.session.set_params(params)
    view.t1_box.setValue(t1)
    view.t1_box.editingFinished.emit()  # as when typed: runs again to t1
    _wait(app, lambda: view.session.t1 == t1 and view.session.complete and view.worker is None)
    return view


def _fields_done(window, view) -> None:
    """The tab as it starts and the docks back, for the shots after."""
    view.choose_model("gray_scott", 64, 2)
    for dock in window.docks.values():
        dock.show()
    window.docks["runs"].raise_()
    window.docks["log"].raise_()


def field3d(app, window, out: Path) -> None:
    """Gray-Scott on 48^3 points: the xy slice a quarter of the way up, xz and yz in the middle."""
    view = _fields_tab(app, window, "gray_scott", 48, 3, 3000.0)
    view.slice_sliders["xy"].setValue(12)
    _shoot(app, window, out, "field3d")
    _fields_done(window, view)


def flow_arrows(app, window, out: Path) -> None:
    """Kolmogorov flow on 128 x 128, its velocity as arrows over the vorticity."""
    view = _fields_tab(app, window, "navier_stokes", 128, 2, 30.0, forcing=0.5)
    view.arrows.box.setChecked(True)
    _shoot(app, window, out, "flow-arrows")
    view.arrows.box.setChecked(False)
    _fields_done(window, view)


SHOTS = {"time_series": time_series_and_phase, "sweep": sweep, "orbit_diagram": orbit_diagram,
         "fit": fit, "field": field, "dark_theme": dark_theme, "bifurcation": bifurcation,
         "phase3d": phase3d, "field3d": field3d, "flow_arrows": flow_arrows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Render the app's screenshots.")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs"
                                             / "screenshots"))
    parser.add_argument("--only", nargs="+", choices=list(SHOTS), default=list(SHOTS),
                        help="take only these shots")
    args = parser.parse_args(argv)
    _reexec_under_xvfb()
    from PySide6.QtCore import QSettings

    from difflab.gui.app import create_application
    from difflab.gui.main_window import MainWindow

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    app = create_application()
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "shots.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.files.ask_unsaved = lambda: "discard"
    window.resize(*SIZE)
    window.show()
    _wait(app, lambda: window.lab.current is not None)
    for name in args.only:
        SHOTS[name](app, window, out)
    window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
