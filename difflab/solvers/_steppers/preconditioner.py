"""The preconditioner of the implicit field steppers' linear solves.

A stage solves ``(I - c J) x = b``, ``J`` the Jacobian of the model's linear operator
(``linear_operator``: walled diffusion, say). Field by field, ``J`` is fitted as
``beta + sum_a alpha_a d2_a``, ``d2_a`` the second difference along axis ``a``, which one
transform per axis diagonalizes:

- along a periodic axis the FFT;
- between Neumann walls the cosine transform (DCT-II);
- between Dirichlet walls the cosine transform of ``(-1)^i u``, a sine transform (DST-II).

Any other pair of sides (Robin, or Dirichlet facing Neumann) takes the cosine transform.
The transforms are orthogonal but for a scale per mode, so the preconditioner
``(I - c fit)^-1`` is symmetric and serves reverse mode's transposed solves as well.
Where ``J`` is such an operator (constant coefficients; the walls' ghost points differ
only next to them) GMRES converges in a few iterations; where it is not, the fit is what
least squares makes of it, and GMRES does the rest.

The fit is made once per stepper: ``J``'s Rayleigh quotients on as many modes as there
are coefficients (the smoothest, and per axis the one halfway up its second
differences), all in one batched Jacobian-vector product.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ...models import Dirichlet


def _dirichlet(grid, axis: int) -> bool:
    return all(isinstance(side, Dirichlet) for side in grid.boundaries[axis])


def _along(values, axis: int, ndim: int):
    """The 1-D ``values`` shaped to lie along ``axis`` of ``ndim`` dimensions."""
    shape = [1] * ndim
    shape[axis] = values.shape[0]
    return values.reshape(shape)


# Every table below is computed by the program from an iota, not stored in it: a stepper's
# loops would otherwise carry each table from one level to the next.

def _symbol(grid, axis: int):
    """The second difference's eigenvalues along ``axis``, in its transform's order,
    shaped to broadcast over the grid."""
    n, h = grid.points[axis], grid.spacing[axis]
    j = jnp.arange(n, dtype=float)
    if grid.periodic(axis):
        s = jnp.sin(np.pi / n * j) ** 2
    elif _dirichlet(grid, axis):
        s = jnp.cos(np.pi / (2 * n) * j) ** 2  # mode j of (-1)^i u is sine mode n - j
    else:
        s = jnp.sin(np.pi / (2 * n) * j) ** 2
    return _along(-4 / h**2 * s, axis, grid.ndim)


def _signs(n: int, axis: int, ndim: int):
    """``(-1)^i`` along ``axis``."""
    return _along(1.0 - 2.0 * (jnp.arange(n) % 2), axis, ndim)


def _twiddle(n: int, count: int, axis: int, ndim: int):
    """``exp(-i pi k / 2n)`` for ``k < count`` along ``axis``."""
    return _along(jnp.exp(-0.5j * np.pi / n * jnp.arange(count)), axis, ndim)


def _part(x, start: int, stop: int, axis: int, stride: int = 1):
    return jax.lax.slice_in_dim(x, start, stop, stride, axis)


def _cosine(x, axis: int):
    """The cosine transform along ``axis`` (DCT-II, unnormalized: twice
    ``sum_i x_i cos(pi k (i + 1/2) / n)``) by one real FFT of the even points then the odd
    ones reversed (Makhoul, IEEE Trans. ASSP 28, 1980)."""
    n = x.shape[axis]
    reordered = jnp.concatenate([_part(x, 0, n, axis, 2),
                                 jnp.flip(_part(x, 1, n, axis, 2), axis)], axis)
    half = jnp.fft.rfft(reordered, axis=axis)
    rest = jnp.flip(_part(half, 1, n - half.shape[axis] + 1, axis), axis)
    full = jnp.concatenate([half, jnp.conj(rest)], axis)  # a real signal's other half
    return 2 * jnp.real(full * _twiddle(n, n, axis, x.ndim))


def _cosine_inverse(y, axis: int):
    """The ``x`` whose :func:`_cosine` along ``axis`` is ``y``."""
    n = y.shape[axis]
    m = n // 2 + 1
    mirrored = jnp.concatenate([jnp.zeros_like(_part(y, 0, 1, axis)),  # y_{n-k}, y_n = 0
                                jnp.flip(_part(y, n - m + 1, n, axis), axis)], axis)
    half = 0.5 * (_part(y, 0, m, axis) - 1j * mirrored) \
        * jnp.conj(_twiddle(n, m, axis, y.ndim))
    v = jnp.fft.irfft(half, n=n, axis=axis)
    evens, odds = _part(v, 0, (n + 1) // 2, axis), jnp.flip(_part(v, (n + 1) // 2, n, axis), axis)
    if n % 2:
        odds = jnp.concatenate([odds, jnp.zeros_like(_part(evens, 0, 1, axis))], axis)
    shape = list(v.shape)
    shape[axis] = 2 * evens.shape[axis]
    return _part(jnp.stack([evens, odds], axis + 1).reshape(shape), 0, n, axis)


def forward(u, grid):
    """``u``'s coefficients in the modes of the second differences (the grid's axes are
    ``u``'s last): complex where an axis is periodic."""
    lead = u.ndim - grid.ndim
    periodic = [lead + a for a in range(grid.ndim) if grid.periodic(a)]
    for axis in range(grid.ndim):
        if grid.periodic(axis):
            continue
        if _dirichlet(grid, axis):
            u = u * _signs(grid.points[axis], lead + axis, u.ndim)
        u = _cosine(u, lead + axis)
    return jnp.fft.fftn(u, axes=periodic, norm="ortho") if periodic else u


def inverse(c, grid):
    """The field whose :func:`forward` is ``c`` (real)."""
    lead = c.ndim - grid.ndim
    periodic = [lead + a for a in range(grid.ndim) if grid.periodic(a)]
    u = jnp.fft.ifftn(c, axes=periodic, norm="ortho").real if periodic else c
    for axis in range(grid.ndim):
        if grid.periodic(axis):
            continue
        u = _cosine_inverse(u, lead + axis)
        if _dirichlet(grid, axis):
            u = u * _signs(grid.points[axis], lead + axis, u.ndim)
    return u


class Preconditioner(eqx.Module):
    """``for_stage(c)``: ``(I - c fit)^-1``; ``coefficients[name]`` are the field's fitted
    ``(beta, alpha_x[, alpha_y[, alpha_z]])``."""

    coefficients: dict
    grid: object

    @classmethod
    def fit(cls, operator, grid, fields: dict, t=0.0) -> "Preconditioner":
        """Fitted to ``operator(t, fields)``'s Jacobian; ``fields``: arrays (or shapes and
        dtypes) of the fields it takes. Each field is probed by as many modes as it has
        coefficients, all probes in one batched Jacobian-vector product."""
        zeros = {name: jnp.zeros(f.shape, dtype=float) for name, f in fields.items()}
        _, jvp = jax.linearize(lambda u: operator(t, u), zeros)
        modes = _probed_modes(grid)
        symbols = jnp.stack([jnp.stack([jnp.ones(())] + [_symbol(grid, a).ravel()[k[a]]
                                                         for a in range(grid.ndim)])
                             for k in modes])
        probes = [(name, jnp.broadcast_to(_mode_field(grid, k), zeros[name].shape))
                  for name in zeros for k in modes]
        batch = {n: jnp.stack([q if name == n else zeros[n] for name, q in probes])
                 for n in zeros}
        seen = jax.vmap(jvp)(batch)
        entries = jnp.stack([jnp.vdot(q, seen[name][i]) / jnp.vdot(q, q)
                             for i, (name, q) in enumerate(probes)])  # Rayleigh quotients
        # least squares: an axis of one to three periodic points has one mode to probe,
        # and its coefficient is then left at zero
        fitted = jnp.linalg.lstsq(symbols, entries.reshape(len(zeros), -1).T)[0]
        return cls(dict(zip(zeros, fitted.T, strict=True)), grid)

    def for_stage(self, c):
        """``b -> (I - c fit)^-1 b``, its divisors made once for the stage's solve."""
        divisors = {name: self._divisor(c, name) for name in self.coefficients}
        return lambda b: {name: inverse(forward(u, self.grid) / divisors[name], self.grid)
                          for name, u in b.items()}

    def _divisor(self, c, name: str):
        beta, *alphas = self.coefficients[name]
        fitted = beta + sum(a * _symbol(self.grid, axis) for axis, a in enumerate(alphas))
        den = 1 - c * fitted
        return jnp.where(jnp.abs(den) > 1e-8, den, 1.0)  # a mode the fit cannot invert


def _smoothest(grid, axis: int) -> int:
    """The index of the mode of ``axis`` with the smallest second difference."""
    return grid.points[axis] - 1 if _dirichlet(grid, axis) else 0


def _probed_modes(grid) -> list[tuple[int, ...]]:
    """The smoothest mode, then per axis the mode halfway up its second differences (the
    others smoothest): as many modes as coefficients to fit."""
    base = tuple(_smoothest(grid, a) for a in range(grid.ndim))
    modes = [base]
    for axis in range(grid.ndim):
        n = grid.points[axis]
        middle = n // 4 if grid.periodic(axis) else n // 2
        modes.append(base[:axis] + (middle,) + base[axis + 1:])
    return modes


def _mode_field(grid, mode: tuple):
    """The real field of ``mode``: per axis ``cos(2 pi k i / n)`` (periodic),
    ``cos(pi k (i + 1/2) / n)`` (walls), times ``(-1)^i`` between Dirichlet walls. Made by
    the program, not stored in it."""
    field = jnp.ones(())
    for axis, k in enumerate(mode):
        n = grid.points[axis]
        i = jnp.arange(n, dtype=float)
        if grid.periodic(axis):
            wave = jnp.cos(2 * np.pi * k / n * i)
        else:
            sign = 1 - 2 * (i % 2) if _dirichlet(grid, axis) else 1.0
            wave = jnp.cos(np.pi * k / n * (i + 0.5)) * sign
        field = field[..., None] * wave
    return field
