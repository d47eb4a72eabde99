"""First-call and warm times of DiffLab's entry points, each case in a fresh process.

A first call traces the Python code into a JAX program, lowers it to XLA and compiles it;
a warm call (new parameter values, the same program) only runs it. For each case a fresh
Python process imports DiffLab, makes the first call, then a warm one, and reports the
seconds of each and where the first call's time went: tracing (Python building jaxprs),
lowering (jaxpr to MLIR) and XLA's compilation, with the number of programs compiled
(from ``jax.monitoring``'s compile events; nested traces are counted once).

    python benchmarks/first_call.py                    # every case, 3 fresh processes each
    python benchmarks/first_call.py --cases fit grad_tsit5 --repeat 5
    python benchmarks/first_call.py --cache            # also: first call, disk cache warm

The compilation cache is off for the first-call figures (``DIFFLAB_NO_COMPILATION_CACHE``
and a cache folder of its own), so they are true first calls. ``--cache`` adds a second
column: the first call of a fresh process whose persistent compilation cache was filled
by an earlier process (a new notebook kernel, the app's second launch). Medians over
``--repeat`` processes; the load average is printed beside them, since the figures move
with whatever else the machine runs. The figures are in ``docs/performance.md``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

T1 = 10.0
EVENTS = {"trace": "/jax/core/compile/jaxpr_trace_duration",
          "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration",
          "compile": "/jax/core/compile/backend_compile_duration"}


# -- the cases: each returns (first call, warm call) -------------------------------------


def _lorenz():
    import difflab as dl

    return dl.models.get("lorenz")()


def _simulate(solver):
    def case():
        import difflab as dl

        model = _lorenz()
        first = lambda: dl.simulate(model, T1, solver=solver).ys
        warm = lambda: dl.simulate(model.replace(rho=29.0), T1, solver=solver).ys
        return first, warm

    return case


def _final_x(solver):
    import difflab as dl

    model = _lorenz()

    def final_x(p):
        m = model.replace(sigma=p[0], rho=p[1], beta=p[2])
        return dl.simulate(m, 2.0, solver=solver, n_save=101).ys[-1, 0]

    return final_x


def _grad_tsit5():
    import jax
    import jax.numpy as jnp

    fn = jax.grad(_final_x("tsit5"))
    return (lambda: fn(jnp.array([10.0, 28.0, 8 / 3])),
            lambda: fn(jnp.array([10.0, 29.0, 8 / 3])))


def _hessian_tsit5():
    import jax
    import jax.numpy as jnp

    fn = jax.hessian(_final_x("tsit5"))
    return (lambda: fn(jnp.array([10.0, 28.0, 8 / 3])),
            lambda: fn(jnp.array([10.0, 29.0, 8 / 3])))


def _grad_vmap_tsit5():
    import jax
    import jax.numpy as jnp

    final_x = _final_x("tsit5")
    fn = jax.grad(lambda ps: jnp.sum(jax.vmap(final_x)(ps)))
    points = jnp.array([[10.0, 28.0, 8 / 3], [10.0, 24.0, 8 / 3], [9.0, 28.0, 3.0]])
    return lambda: fn(points), lambda: fn(points + 0.5)


def _fit():
    """The three rates of Lotka-Volterra fitted to noisy data (``docs/fitting.md``)."""
    import numpy as np

    import difflab as dl

    cls = dl.models.get("lotka_volterra")
    truth = dl.simulate(cls(alpha=1.1, beta=0.4, gamma=0.4), 20.0, n_save=41)
    noise = np.random.default_rng(0).normal(0.0, 0.2, np.shape(truth.ys))
    data = {"t": np.asarray(truth.ts), "prey": np.asarray(truth["prey"]) + noise[:, 0],
            "predator": np.asarray(truth["predator"]) + noise[:, 1]}
    params = ["alpha", "beta", "gamma"]
    return (lambda: dl.fit(cls(alpha=0.8, beta=0.3, gamma=0.5), data, params, sigma=0.2).params,
            lambda: dl.fit(cls(alpha=0.9, beta=0.5, gamma=0.3), data, params, sigma=0.2).params)


def _sweep():
    import difflab as dl

    model = _lorenz()

    def run(lo):
        space = dl.grid(rho=[lo + i for i in range(64)])
        return dl.sweep(model, space, T1, observables={"peak": "max(z)"}).observables["peak"]

    return lambda: run(0.0), lambda: run(0.5)


def _sweep_lambda():
    """A notebook cell run twice: its observable is a new ``lambda`` each time."""
    import jax.numpy as jnp

    import difflab as dl

    model, space = _lorenz(), dl.grid(rho=[float(i) for i in range(64)])

    def cell():
        peak = eval("lambda traj: jnp.max(traj['z']) - 1.0", {"jnp": jnp})
        return dl.sweep(model, space, T1, observables={"peak": peak}).observables["peak"]

    return cell, cell


def _method_of_lines_rod():
    """The heat equation ``u_t = D u_xx`` on 50 points between walls at zero, by the method
    of lines: a stiff ODE of 50 states solved by ``kvaerno5`` (``heat1d`` was this model
    before it became a field model)."""
    import equinox as eqx
    import jax.numpy as jnp
    import numpy as np

    import difflab as dl

    class Rod(dl.Model):
        D: float = dl.param(0.1, bounds=(1e-4, 10.0))
        n: int = eqx.field(static=True, default=50)
        default_solver = "kvaerno5"

        @property
        def state_names(self):
            return tuple(f"u{i}" for i in range(self.n))

        def vector_field(self, t, y):
            dx = 1.0 / (self.n + 1)
            u = jnp.pad(y, 1)
            return self.D * (u[2:] - 2.0 * y + u[:-2]) / dx**2

        def initial_state(self):
            return jnp.asarray(np.sin(np.pi * np.arange(1, self.n + 1) / (self.n + 1)))

    return Rod


def _app_solve(model_name, started=False, model_class=None):
    """The app's first solve of ``model_name`` (or of the class ``model_class()`` makes)
    in a bare process, or (``started``) after the app's start-up work: the default
    model's precompile and what it loads after."""
    def case():
        import difflab as dl
        from difflab.app.runs import RunSettings, SolveRequest, precompile, solve

        if started:
            default = dl.models.get("pendulum")
            precompile(SolveRequest(0, default(), "pendulum", RunSettings())).join()
        cls = model_class() if model_class else dl.models.get(model_name)
        first = SolveRequest(0, cls(), model_name, RunSettings())
        spec = next(iter(cls.parameter_specs().items()))
        warm = SolveRequest(1, cls().replace(**{spec[0]: spec[1].default * 1.1}), model_name,
                            RunSettings())
        return lambda: solve(first).ys, lambda: solve(warm).ys

    return case


CASES = {
    "simulate_rk4": _simulate("rk4"),
    "simulate_tsit5": _simulate("tsit5"),
    "simulate_kvaerno5": _simulate("kvaerno5"),
    "grad_tsit5": _grad_tsit5,
    "hessian_tsit5": _hessian_tsit5,
    "grad_vmap_tsit5": _grad_vmap_tsit5,
    "fit": _fit,
    "sweep": _sweep,
    "sweep_lambda": _sweep_lambda,  # warm: the same cell run again
    "app_first_solve": _app_solve("pendulum"),  # the model the app opens with
    "app_stiff_solve": _app_solve("rod", model_class=_method_of_lines_rod),  # kvaerno5
    "app_stiff_after_start": _app_solve("rod", started=True,  # as the app picks it
                                        model_class=_method_of_lines_rod),
}


# -- one case in this process -----------------------------------------------------------


class Spans:
    """The compile events' time spans, per kind of event."""

    def __init__(self):
        self.spans = {kind: [] for kind in EVENTS}
        self.compiles = 0

    def __call__(self, event, start, end, **_):
        for kind, name in EVENTS.items():
            if event == name:
                self.spans[kind].append((start, end))
                self.compiles += kind == "compile"

    def seconds(self, *kinds) -> float:
        """The time covered by events of ``kinds`` (nested and overlapping ones once)."""
        total, reach = 0.0, -1.0
        for start, end in sorted(s for kind in kinds for s in self.spans[kind]):
            if end > reach:
                total += end - max(start, reach)
                reach = end
        return total


def run_child(name: str) -> dict:
    import jax

    started = time.perf_counter()
    import difflab  # noqa: F401  (the import is timed apart from the first call)

    imported = time.perf_counter() - started
    spans = Spans()
    jax.monitoring.register_event_time_span_listener(spans)
    first, warm = CASES[name]()  # data made here are not timed
    spans.__init__()
    start = time.perf_counter()
    jax.block_until_ready(first())
    first_s = time.perf_counter() - start
    compiled = spans.seconds("compile")
    lowered = spans.seconds("compile", "lower") - compiled
    programs = spans.compiles
    start = time.perf_counter()
    jax.block_until_ready(warm())
    warm_s = time.perf_counter() - start
    return dict(case=name, import_s=imported, first_s=first_s, warm_s=warm_s,
                python_s=first_s - compiled - lowered, lower_s=lowered, compile_s=compiled,
                programs=programs, warm_programs=spans.compiles - programs)


# -- the driver ----------------------------------------------------------------------------


def _child(name: str, cache_dir: str | None) -> dict:
    env = dict(os.environ)
    env.pop("DIFFLAB_NO_COMPILATION_CACHE", None)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    if cache_dir is None:
        env["DIFFLAB_NO_COMPILATION_CACHE"] = "1"
    else:
        env["XDG_CACHE_HOME"] = cache_dir
    out = subprocess.run([sys.executable, __file__, "--child", name], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cached_first(name: str) -> float:
    """The first call of a fresh process after another one filled the disk cache."""
    with tempfile.TemporaryDirectory() as folder:
        _child(name, folder)
        return _child(name, folder)["first_s"]


def _row(name: str, repeat: int, cache: bool) -> dict:
    runs = [_child(name, None) for _ in range(repeat)]
    row = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k.endswith("_s")}
    row.update(case=name, programs=runs[0]["programs"], warm_programs=runs[0]["warm_programs"],
               load=os.getloadavg()[0],
               firsts=[round(r["first_s"], 2) for r in runs])
    if cache:
        row["cached_first_s"] = statistics.median(_cached_first(name) for _ in range(repeat))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per case")
    parser.add_argument("--cache", action="store_true",
                        help="also time a first call with the disk cache filled")
    parser.add_argument("--json", action="store_true", help="print one JSON row per case")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child)), flush=True)
        os._exit(0)  # no teardown: a sweep's worker thread may abort the exit of JAX
    print(f"{'case':<19}{'first s':>8}{'warm s':>8}{'python':>7}{'lower':>7}{'compile':>8}"
          f"{'progs':>6}{'warm':>5}{'cached':>8}  load  (each first call)")
    for name in args.cases:
        row = _row(name, args.repeat, args.cache)
        if args.json:
            print(json.dumps(row))
            continue
        print(_line(row), flush=True)


def _line(row: dict) -> str:
    cached = f"{row['cached_first_s']:8.2f}" if "cached_first_s" in row else f"{'-':>8}"
    return (f"{row['case']:<19}{row['first_s']:8.2f}{row['warm_s']:8.3f}{row['python_s']:7.2f}"
            f"{row['lower_s']:7.2f}{row['compile_s']:8.2f}{row['programs']:6d}"
            f"{row['warm_programs']:5d}{cached}  {row['load']:.1f}  {row['firsts']}")


if __name__ == "__main__":
    main()
