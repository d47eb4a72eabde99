"""How live the app feels: slider-to-plot latency and the frame rate of a streamed run.

Run it on a desktop, under Xvfb, or offscreen::

    xvfb-run -a python benchmarks/gui_latency.py
    QT_QPA_PLATFORM=offscreen python benchmarks/gui_latency.py --repeats 50

1. Latency: the pendulum with 10,000 RK4 steps (t1 = 10, dt = 1e-3, 1,001 saved points).
   The g slider of the parameter panel is moved one step at a time; each measurement is
   the time from ``slider.setValue`` to the moment the time-series plot holds the new
   curve (the re-solve on the live-solver thread, the signal back, the lab event and
   ``setData``). Target: median under 50 ms.
2. Frame rate: the spring chain (16 states) streamed with 10 of its states shown,
   100,001 saved points per curve (20,000,000 RK4 steps, so the stream lasts seconds),
   drawn as chunks arrive. The first frame, which creates the curves and the legend, is
   left out of the count. Frames are the paint
   events of the plot's viewport while chunks arrive. Also reported: the time of each
   redraw (``setData`` of 10 curves) and the GUI thread's CPU time per frame, which
   gives the frame rate a free core would reach (on a loaded machine the GUI thread waits
   for a core, and the measured rate is lower). Target: at least 30 fps.

3. Field frame rate (``--fields`` alone): the 2-D field view (``Fields 2-D`` tab)
   showing Gray-Scott streamed at 256 x 256 and 512 x 512 (ETDRK4, dt = 1, one step
   per frame, 4 frames per chunk; 240 and 80 frames), both fields drawn as images with
   colour bars.
   Frames are the view's redraws that show a frame not shown before, while chunks arrive
   (from the second chunk: the first compiles); the view steps through every frame of
   each chunk at the pace chunks come. Also reported: the frames the stream computed per
   second (which bounds the rate), the time of one redraw (two ``setImage`` with levels
   and colour bars) and the GUI thread's CPU per frame drawn, whose inverse is the rate
   a free core would reach. Responsiveness: how late a 10 ms timer of the GUI thread
   fires while the run streams (the wait an input event would see), median and worst.

The numbers depend on the machine and its load: the script prints the load average.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np


def _app():
    from PySide6.QtCore import QSettings

    from difflab.gui.app import create_application
    from difflab.gui.main_window import MainWindow

    app = create_application()
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "bench.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.files.ask_unsaved = lambda: "discard"
    window.resize(1400, 900)
    window.show()
    return app, window


def _wait(app, condition, timeout=300.0) -> None:
    """Run the event loop until ``condition()`` holds, checking every millisecond.

    The GUI thread idles in Qt's event loop meanwhile, as in the app (a Python loop of
    ``processEvents`` would hold the GIL and slow the worker threads down).
    """
    from PySide6.QtCore import QEventLoop, QTimer

    if condition():
        return
    loop = QEventLoop()
    check = QTimer()
    check.setInterval(1)
    check.timeout.connect(lambda: condition() and loop.quit())
    give_up = QTimer()
    give_up.setSingleShot(True)
    give_up.timeout.connect(loop.quit)
    check.start()
    give_up.start(int(timeout * 1000))
    loop.exec()
    check.stop()
    if not condition():
        raise TimeoutError("the app did not get there in time")


def latency(app, window, repeats: int) -> dict:
    """Median time from a slider step to the plot holding the new curve."""
    lab, plot = window.lab, window.time_plot
    lab.set_settings(t1=10.0, dt=1e-3, solver="rk4", n_save=None)
    _wait(app, lambda: lab.current is not None and lab.current.settings.dt == 1e-3
          and lab.current.steps == 10_000)
    drawn = {}
    original = plot.draw

    def draw():
        original()
        run = lab.current
        if run is not None and ("current", "theta") in plot.curves:
            drawn.setdefault(float(run.model.g), time.perf_counter())

    plot.draw = draw
    plot.redraw._fn = draw
    row = window.parameter_panel.rows["g"]
    times = []
    start = row.slider.value()
    for i in range(repeats + 3):
        position = start + (i % 40 + 1) * (1 if i % 80 < 40 else -1)
        _wait(app, lambda: window.lab.current is not None, 10)
        app.processEvents()
        before = time.perf_counter()
        row.slider.setValue(position)
        g = lab.params["g"]
        _wait(app, lambda: g in drawn)
        if i >= 3:  # the first steps may still compile something
            times.append(drawn[g] - before)
        time.sleep(0.02)
    return {"median_ms": 1e3 * statistics.median(times), "p90_ms": 1e3 * float(np.percentile(times, 90)),
            "min_ms": 1e3 * min(times), "repeats": len(times)}


def frame_rate(app, window) -> dict:
    """Frames per second while 10 curves of 100,001 points stream in."""
    from PySide6.QtCore import QEvent, QObject

    lab = window.lab
    window.actions["live"].setChecked(False)
    window.toggle_live(False)
    lab.select_model("spring_chain")
    lab.set_settings(t1=100.0, dt=5e-6, solver="rk4", n_save=100_001)
    lab.set_layout(time_states=lab.state_names[:10], view="time")

    class Frames(QObject):
        def __init__(self):
            super().__init__()
            self.times = []

        def eventFilter(self, obj, event):  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                self.times.append(time.perf_counter())
            return False

    frames = Frames()
    window.time_plot.plot.viewport().installEventFilter(frames)
    draws, original = [], window.time_plot.draw

    def draw():
        t = time.perf_counter()
        original()
        draws.append(time.perf_counter() - t)

    window.time_plot.redraw._fn = draw
    chunks, cpu = [], []

    def chunk_arrived(item):
        chunks.append(time.perf_counter())
        cpu.append(time.thread_time())  # CPU time of the GUI thread so far

    window.run_stream()
    worker = window.workers["stream"]
    worker.item.connect(chunk_arrived)
    _wait(app, lambda: "stream" not in window.workers, 600)
    if len(chunks) < 3:
        raise RuntimeError("the stream produced too few chunks to measure")
    first, last = chunks[2], chunks[-1]  # from the third chunk: the curves exist by then
    during = [t for t in frames.times if first <= t <= last]
    run = lab.current
    curves = [c for k, c in window.time_plot.curves.items() if k[0] == "current"]
    gui_cpu = (cpu[-1] - cpu[2]) / max(len(during), 1)
    return {"fps": len(during) / (last - first), "frames": len(during), "chunks": len(chunks),
            "gui_cpu_per_frame_ms": 1e3 * gui_cpu, "fps_capacity": 1.0 / max(gui_cpu, 1e-9),
            "seconds": last - first, "points_per_curve": len(run.ts),
            "curves": len(curves), "redraw_median_ms": 1e3 * statistics.median(draws),
            "redraw_max_ms": 1e3 * max(draws)}


def field_frame_rate(app, points: int, frames: int) -> dict:
    """Frames per second of the 2-D field view while Gray-Scott streams on a grid of
    ``points`` x ``points``."""
    from PySide6.QtCore import QTimer

    from difflab.app.fields import FieldSession
    from difflab.gui.field2d_view import Field2DView

    session = FieldSession(None, "gray_scott", points)
    session.t1, session.dt, session.n_frames = float(frames - 1), 1.0, frames
    view = Field2DView(session)
    view.resize(1200, 600)
    view.show()
    drawn, chunks, cpu, draws, shown = [], [], [], [], [-1]
    original = view.draw

    def draw():
        t = time.perf_counter()
        original()
        draws.append(time.perf_counter() - t)
        if view.frame != shown[-1]:  # a frame not shown before
            drawn.append(time.perf_counter())
            shown.append(view.frame)

    view.redraw._fn = draw
    computed = []
    session.events.frames.connect(lambda e: (chunks.append(time.perf_counter()),
                                             cpu.append(time.thread_time()),
                                             computed.append(len(session.frames))))
    ticks = []
    tick = QTimer(interval=10)
    tick.timeout.connect(lambda: ticks.append(time.perf_counter()))
    tick.start()
    view.run(0)
    _wait(app, lambda: session.complete and view.worker is None, 600)
    tick.stop()
    view.shutdown()
    first, last = chunks[1], chunks[-1]  # from the second chunk: the first compiles
    during = [t for t in drawn if first <= t <= last]
    gui_cpu = (cpu[-1] - cpu[1]) / max(len(during), 1)
    late = [1e3 * (b - a) - 10.0 for a, b in zip(ticks, ticks[1:]) if first <= a <= last]
    replay = replay_rate(view)
    view.close()
    return {"points": points, "fps": len(during) / (last - first), "frames": len(during),
            "chunks": len(chunks), "seconds": last - first,
            "computed_fps": (computed[-1] - computed[1]) / (last - first),
            "redraw_median_ms": 1e3 * statistics.median(draws[2:]),
            "gui_cpu_per_frame_ms": 1e3 * gui_cpu, "fps_capacity": 1.0 / max(gui_cpu, 1e-9),
            "replay_fps": replay, "timer_late_median_ms": statistics.median(late),
            "timer_late_max_ms": max(late)}


def replay_rate(view) -> float:
    """Frames per second of the view alone: every frame drawn and painted in turn, as the
    scrubber's Play does, with no stream beside it."""
    frames = len(view.session.frames)
    start = time.perf_counter()
    for k in range(frames):
        view.scrubber.setValue(k)
        view.draw()
        view.images.viewport().repaint()
    return frames / (time.perf_counter() - start)


def field_slider_latency(app, points: int, repeats: int, name: str = "F") -> dict:
    """Median time from a step of Gray-Scott's ``name`` spin box (``points`` x ``points``)
    to the view showing the first frame of the run it starts: the 150 ms pause the view
    waits for more edits, the re-solve of one frame and its drawing. ``F`` leaves the
    linear part as it was; ``Du`` changes it, and with it the ETDRK4 weights."""
    from difflab.app.fields import FieldSession
    from difflab.gui.field2d_view import Field2DView

    session = FieldSession(None, "gray_scott", points)
    session.t1, session.dt, session.n_frames = 40.0, 1.0, 11  # 4 steps a frame
    view = Field2DView(session)
    view.resize(1200, 600)
    view.show()
    shown = []
    view.drawn.connect(lambda k: shown.append((time.perf_counter(), k)))
    view.run(0)
    _wait(app, lambda: session.complete and view.worker is None, 600)
    spin, times = view.parameters.rows[name].spin, []
    value = spin.value()
    for i in range(repeats + 1):  # the first compiles the re-solve: not counted
        start = time.perf_counter()
        spin.setValue(value * (1 + 0.01 * (i + 1)))
        _wait(app, lambda: view.worker is not None, 60)  # run(0) has dropped the old frames
        began = time.perf_counter()
        _wait(app, lambda: any(t > began and k >= 1 for t, k in shown[-3:]), 120)
        times.append(next(t for t, k in shown if t > began and k >= 1) - start)
        _wait(app, lambda: session.complete and view.worker is None, 600)
    view.shutdown()
    view.close()
    return {"points": points, "parameter": name, "median_ms": 1e3 * statistics.median(times[1:]),
            "min_ms": 1e3 * min(times[1:]), "repeats": repeats}


def print_fields(rates: list[dict]) -> None:
    for r in rates:
        print(f"field view, Gray-Scott {r['points']} x {r['points']}: {r['fps']:.1f} "
              f"frames/s ({r['frames']} frames in {r['seconds']:.1f} s; the stream computed "
              f"{r['computed_fps']:.1f} frames/s), redraw median "
              f"{r['redraw_median_ms']:.1f} ms, GUI CPU {r['gui_cpu_per_frame_ms']:.1f} ms "
              f"per frame: {r['fps_capacity']:.0f} frames/s on a free core; replayed "
              f"without the stream: {r['replay_fps']:.0f} frames/s; a 10 ms timer fired "
              f"{r['timer_late_median_ms']:.1f} ms late (median), {r['timer_late_max_ms']:.0f} "
              f"ms at worst")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40, help="slider steps to time")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--fields", action="store_true",
                        help="only the 2-D field view: its frame rate (256 and 512 points) "
                        "and slider-to-picture latency (128 and 256 points; F, then Du)")
    args = parser.parse_args(argv)
    if args.fields:
        from difflab.gui.app import create_application

        app = create_application()
        rates = [field_frame_rate(app, n, frames) for n, frames in ((256, 241), (512, 81))]
        slider = [field_slider_latency(app, n, 10, name) for name in ("F", "Du")
                  for n in (128, 256)]
        print(f"Qt platform {app.platformName()}, {os.cpu_count()} CPUs, load average "
              + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
        if args.json:
            print(json.dumps({"frame_rates": rates, "slider": slider}, indent=2))
            return 0
        print_fields(rates)
        for r in slider:
            print(f"slider {r['parameter']} -> picture (Gray-Scott {r['points']} x "
                  f"{r['points']}, the first frame of the re-solve): median {r['median_ms']:.0f} ms, min "
                  f"{r['min_ms']:.0f} ms over {r['repeats']} steps, 150 ms of it the pause "
                  f"for more edits")
        return 0
    app, window = _app()
    result = {"platform": app.platformName(), "load_average": os.getloadavg(),
              "cpus": os.cpu_count(), "latency": latency(app, window, args.repeats),
              "streaming": frame_rate(app, window)}
    window.shutdown()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    lat, fps = result["latency"], result["streaming"]
    print(f"Qt platform {result['platform']}, {result['cpus']} CPUs, load average "
          + ", ".join(f"{x:.1f}" for x in result["load_average"]))
    print(f"slider -> plot (pendulum, 10,000 RK4 steps): median {lat['median_ms']:.1f} ms, "
          f"p90 {lat['p90_ms']:.1f} ms, min {lat['min_ms']:.1f} ms over {lat['repeats']} "
          f"steps; target < 50 ms")
    print(f"streaming {fps['curves']} curves of {fps['points_per_curve']:,} points: "
          f"{fps['fps']:.1f} frames/s ({fps['frames']} frames, {fps['chunks']} chunks in "
          f"{fps['seconds']:.1f} s), redraw median {fps['redraw_median_ms']:.1f} ms, max "
          f"{fps['redraw_max_ms']:.1f} ms; target >= 30 fps")
    print(f"  the GUI thread spent {fps['gui_cpu_per_frame_ms']:.1f} ms of CPU per frame "
          f"(chunk handling, redraw, paint): {fps['fps_capacity']:.0f} frames/s on a free core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
