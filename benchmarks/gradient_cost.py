"""What a gradient through a simulation costs: time relative to the forward pass, memory.

For a loss over a 1,000-step RK4 trajectory of Lorenz (t = 0..10, dt = 0.01, 1001 saved
states; the mean squared distance to a reference trajectory), with respect to its three
parameters, prints

- time(value and gradient) / time(loss) for one trajectory, and for a batch of 1,000
  (the loss summed over 1,000 parameter points, each with its own gradient), for
  DiffLab's two adjoints (``"forward"`` sensitivities, which ``"auto"`` picks for 3
  parameters, and the ``"reverse"`` checkpointed adjoint) and for diffrax's default
  (``RecursiveCheckpointAdjoint``) on the same RK4 tableau;
- the memory XLA assigns to the gradient program at 10^4, 10^5 and 10^6 steps;
- the cost of the same gradient by central finite differences, and its error.

Targets (issue 4): at most 5x the forward pass in both cases; memory at 10^6 steps at
most 10x that at 10^4.

    python benchmarks/gradient_cost.py            # both XLA settings, one after the other
    python benchmarks/gradient_cost.py --here     # this process's XLA settings only

XLA's CPU backend compiles a ``while`` loop into one kernel only when its body is small
(under 1 kB of buffers by default); bigger loop bodies, like the tangent-carrying loop of
forward sensitivities, run op by op with a dispatch per operation. DiffLab raises that
limit when it is imported (``difflab/_config.py``); the script runs twice, with DiffLab's
setting and with XLA's default put back through
``XLA_FLAGS=--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=1024``.
"""

import os
import statistics
import subprocess
import sys
import time

LIMIT_OPTION = "--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold="
XLA_DEFAULT_LIMIT = 1024
T1, DT, N_SAVE, BATCH = 10.0, 0.01, 1001, 1000


def _median_s(fn, *args, repeats=7):
    import jax

    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# -- the loss, in DiffLab and in diffrax -------------------------------------------------


def difflab_loss(adjoint):
    import jax.numpy as jnp

    import difflab as dl

    def loss(model, reference, dt=DT):  # dt is traced: one program for every step count
        ys = dl.simulate(model, T1, dt=dt, solver="rk4", n_save=N_SAVE, adjoint=adjoint).ys
        return jnp.mean((ys - reference) ** 2)

    return loss


def diffrax_loss(max_steps=int(T1 / DT)):
    import diffrax
    import jax.numpy as jnp
    import numpy as np

    class RK4(diffrax.AbstractERK):
        tableau = diffrax.ButcherTableau(
            c=np.array([0.5, 0.5, 1.0]), b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
            b_error=np.zeros(4),
            a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])))
        interpolation_cls = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

        def order(self, terms):
            return 4

    def field(t, y, p):
        return jnp.stack([p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1],
                          y[0] * y[1] - p[2] * y[2]])

    def loss(params, reference, dt=DT):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(field), RK4(), 0.0, T1, dt, jnp.ones(3), args=params,
            saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, T1, N_SAVE)), max_steps=max_steps,
            adjoint=diffrax.RecursiveCheckpointAdjoint())
        return jnp.mean((sol.ys - reference) ** 2)

    return loss


# -- the measurements ----------------------------------------------------------------------


def _setup():
    import jax
    import jax.numpy as jnp

    import difflab as dl

    lorenz = dl.models.get("lorenz")()
    reference = dl.simulate(lorenz.replace(rho=27.0), T1, dt=DT, n_save=N_SAVE).ys
    rhos = jnp.linspace(20.0, 30.0, BATCH)
    batch = jax.vmap(lambda r: lorenz.replace(rho=r))(rhos)
    params = jnp.array([10.0, 28.0, 8.0 / 3.0])
    params_batch = jnp.stack([jnp.full(BATCH, 10.0), rhos, jnp.full(BATCH, 8.0 / 3.0)], -1)
    return lorenz, batch, params, params_batch, reference


def ratios(repeats_single=21, repeats_batch=3):
    """(name, single ratio, batch ratio, single forward s, batch forward s)."""
    import jax
    import jax.numpy as jnp

    lorenz, batch, params, params_batch, reference = _setup()
    rows = []
    for name, adjoint in (("difflab forward sensitivities", "forward"),
                          ("difflab checkpointed reverse", "reverse")):
        loss = difflab_loss(adjoint)
        summed = lambda ms, ref: jnp.sum(jax.vmap(loss, in_axes=(0, None))(ms, ref))
        rows.append(_ratio_row(name, loss, summed, lorenz, batch, reference,
                               repeats_single, repeats_batch))
    loss = diffrax_loss()
    summed = lambda ps, ref: jnp.sum(jax.vmap(loss, in_axes=(0, None))(ps, ref))
    rows.append(_ratio_row("diffrax RecursiveCheckpointAdjoint", loss, summed, params,
                           params_batch, reference, repeats_single, repeats_batch))
    return rows


def _ratio_row(name, loss, summed, one, batch, reference, repeats_single, repeats_batch):
    import jax

    f1 = jax.jit(loss)
    g1 = jax.jit(jax.value_and_grad(loss))
    fb = jax.jit(summed)
    gb = jax.jit(jax.value_and_grad(summed))
    t_f1 = _median_s(f1, one, reference, repeats=repeats_single)
    t_g1 = _median_s(g1, one, reference, repeats=repeats_single)
    t_fb = _median_s(fb, batch, reference, repeats=repeats_batch)
    t_gb = _median_s(gb, batch, reference, repeats=repeats_batch)
    return name, t_g1 / t_f1, t_gb / t_fb, t_f1, t_fb


def finite_differences(repeats=21):
    """(time ratio, max relative error) of central differences against the exact gradient:
    the 6 perturbed runs as one jitted, vmapped call."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    lorenz, _, _, _, reference = _setup()
    loss = difflab_loss("forward")
    names = list(lorenz.parameters())
    values = jnp.stack([getattr(lorenz, n) for n in names])
    eps = 1e-6 * jnp.abs(values)
    shifts = jnp.concatenate([jnp.diag(eps), -jnp.diag(eps)])

    @jax.jit
    def fd(values, reference):
        def one(shift):
            v = values + shift
            return loss(lorenz.replace(**{n: v[k] for k, n in enumerate(names)}), reference)

        out = jax.vmap(one)(shifts)
        return (out[:3] - out[3:]) / (2 * eps)

    exact = jax.jit(jax.grad(loss))(lorenz, reference)
    exact = np.array([float(getattr(exact, n)) for n in names])
    approx = np.asarray(fd(values, reference))
    t_fd = _median_s(fd, values, reference, repeats=repeats)
    t_f = _median_s(jax.jit(loss), lorenz, reference, repeats=repeats)
    return t_fd / t_f, float(np.max(np.abs(approx - exact) / np.abs(exact)))


def memory(steps=(10_000, 100_000, 1_000_000)):
    """{name: [bytes at each step count]}: XLA's buffers (temporaries + outputs)."""
    import jax

    lorenz, _, params, _, reference = _setup()
    out = {}
    for name, adjoint in (("difflab forward sensitivities", "forward"),
                          ("difflab checkpointed reverse", "reverse")):
        grad = jax.jit(jax.grad(difflab_loss(adjoint)))
        out[name] = [_bytes(grad.lower(lorenz, reference, T1 / n).compile()) for n in steps]
    row = []
    for n in steps:
        loss = diffrax_loss(max_steps=n)
        grad = jax.jit(jax.grad(lambda p, r: loss(p, r, T1 / n)))
        row.append(_bytes(grad.lower(params, reference).compile()))
    out["diffrax RecursiveCheckpointAdjoint"] = row
    return out


def _bytes(compiled) -> int:
    m = compiled.memory_analysis()
    return int(m.temp_size_in_bytes + m.output_size_in_bytes)


def run_here() -> None:
    import jax

    from difflab._config import SMALL_LOOP_BYTES

    flags = os.environ.get("XLA_FLAGS", "")
    raised = f"{LIMIT_OPTION}{XLA_DEFAULT_LIMIT}" not in flags
    limit = f"DiffLab's ({SMALL_LOOP_BYTES:.0e} B)" if raised else "XLA's default (1 kB)"
    print(f"\n=== XLA CPU small-while-loop limit: {limit}"
          f" | jax {jax.__version__}, {jax.devices()[0].device_kind}, "
          f"{os.cpu_count()} CPU threads ===")
    print(f"\nLorenz, RK4, {int(T1 / DT)} steps, loss over {N_SAVE} saved states, "
          f"gradient w.r.t. 3 parameters")
    print(f"{'':38} {'1 trajectory':>14} {'batch of 1000':>14}   (forward: 1 / batch)")
    for name, r1, rb, t1, tb in ratios():
        print(f"{name:38} {r1:13.2f}x {rb:13.2f}x   ({1e3 * t1:.3f} ms / {1e3 * tb:.1f} ms)")
    ratio, error = finite_differences()
    print(f"{'central finite differences (3 params)':38} {ratio:13.2f}x"
          f"   max relative error {error:.1e}")
    print("\nmemory of the gradient (XLA buffers: temporaries + outputs)")
    print(f"{'':38} {'10^4 steps':>12} {'10^5 steps':>12} {'10^6 steps':>12} {'10^6 / 10^4':>12}")
    for name, row in memory().items():
        cells = "".join(f"{b / 2**20:10.2f} MB" for b in row)
        print(f"{name:38} {cells} {row[-1] / row[0]:11.1f}x")


def main() -> None:
    if "--here" in sys.argv:
        run_here()
        return
    for flags in ("", f"{LIMIT_OPTION}{XLA_DEFAULT_LIMIT}"):
        env = dict(os.environ, XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip())
        subprocess.run([sys.executable, __file__, "--here"], env=env, check=True)


if __name__ == "__main__":
    main()
