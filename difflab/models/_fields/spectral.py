"""Spectral (FFT) derivatives on periodic axes, wavenumbers and 2/3 dealiasing.

Fields go to Fourier space with ``rfftn`` over all axes (the last axis halved), so the
multipliers here have the shape ``fourier_shape(grid)``. Every function refuses a grid
axis that is not periodic, saying why.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from .grid import AXIS_NAMES


def _check_periodic(grid, axes) -> None:
    for axis in axes:
        if not grid.periodic(axis):
            raise ValueError(
                f"spectral derivatives need a periodic axis; axis {AXIS_NAMES[axis]} has "
                f"{type(grid.boundaries[axis][0]).__name__} boundaries (Fourier modes would "
                f"not meet them): use the finite-difference operators there")


def fourier_shape(grid) -> tuple[int, ...]:
    """The shape of a field's ``rfftn``: the last axis has ``n // 2 + 1`` modes."""
    return (*grid.points[:-1], grid.points[-1] // 2 + 1)


def axis_wavenumbers(grid, axis: int, real: bool = False) -> np.ndarray:
    """The angular wavenumbers ``2 pi m / L`` of ``axis`` (``rfftfreq``'s if ``real``)."""
    _check_periodic(grid, [axis])
    n, h = grid.points[axis], grid.spacing[axis]
    freqs = np.fft.rfftfreq(n, h) if real else np.fft.fftfreq(n, h)
    return 2 * np.pi * freqs


def wavenumbers(grid) -> tuple[np.ndarray, ...]:
    """One broadcastable array of wavenumbers per axis, in ``rfftn``'s layout."""
    _check_periodic(grid, range(grid.ndim))
    last = grid.ndim - 1
    ks = []
    for axis in range(grid.ndim):
        k = axis_wavenumbers(grid, axis, real=axis == last)
        shape = [1] * grid.ndim
        shape[axis] = k.size
        ks.append(k.reshape(shape))
    return tuple(ks)


def laplace_multiplier(grid) -> np.ndarray:
    """``-|k|^2`` in ``rfftn``'s layout: the Laplacian as a Fourier multiplier."""
    return -sum(k**2 for k in wavenumbers(grid)) * np.ones(fourier_shape(grid))


def _nyquist_free(k: np.ndarray, n: int) -> np.ndarray:
    """``k`` with the Nyquist mode of an even ``n`` zeroed (its odd derivatives are not real)."""
    k = k.copy()
    if n % 2 == 0:
        k[n // 2] = 0.0
    return k


def gradient_multipliers(grid) -> tuple[np.ndarray, ...]:
    """``i k`` along each axis, broadcastable in ``rfftn``'s layout, without an even
    axis's Nyquist mode (as :func:`spectral_derivative` takes it)."""
    return tuple(1j * _nyquist_free(k.ravel(), n).reshape(k.shape)
                 for k, n in zip(wavenumbers(grid), grid.points, strict=True))


def derivative_multiplier(grid, axis: int, order: int = 1) -> np.ndarray:
    """``(i k)^order`` along ``axis`` in ``rfft``'s layout of that axis (1-D); odd orders
    drop the Nyquist mode."""
    k = axis_wavenumbers(grid, axis, real=True)
    if order % 2:
        k = _nyquist_free(k, grid.points[axis])
    return (1j * k) ** order


def spectral_derivative(u, grid, axis: int, order: int = 1):
    """The ``order``-th derivative of ``u`` along a periodic ``axis``, by FFT."""
    factor = derivative_multiplier(grid, axis, order)
    shape = [1] * u.ndim
    shape[axis] = factor.size
    u_hat = jnp.fft.rfft(u, axis=axis)
    return jnp.fft.irfft(jnp.asarray(factor).reshape(shape) * u_hat, n=grid.points[axis],
                         axis=axis)


def spectral_laplace(u, grid):
    """The Laplacian of ``u`` on a fully periodic grid, by FFT."""
    multiplier = jnp.asarray(laplace_multiplier(grid))
    return from_fourier(multiplier * to_fourier(u, grid), grid)


def dominant_wavelength(u, grid):
    """The wavelength ``2 pi / |k|`` of the strongest Fourier mode of the field ``u``
    other than its mean: the length scale of a pattern, the peak of its power spectrum."""
    k = np.sqrt(sum(k**2 for k in wavenumbers(grid)))
    k = np.broadcast_to(k, fourier_shape(grid)).ravel()
    power = jnp.abs(to_fourier(u, grid)).ravel() ** 2
    return 2 * np.pi / jnp.asarray(k)[jnp.argmax(jnp.where(k > 0, power, -1.0))]


def to_fourier(u, grid):
    """``rfftn`` of a field over the grid's axes (the trailing ones of ``u``)."""
    return jnp.fft.rfftn(u, axes=tuple(range(-grid.ndim, 0)))


def from_fourier(u_hat, grid):
    """The field whose ``rfftn`` is ``u_hat``."""
    return jnp.fft.irfftn(u_hat, s=grid.points, axes=tuple(range(-grid.ndim, 0)))


def stack_fields(fields: dict, ndim: int):
    """The fields' arrays as rows of one array ``(rows, *trailing)``, each field's leading
    axes (a vector's components) flattened into rows, in the dict's order."""
    return jnp.concatenate([u.reshape(-1, *u.shape[u.ndim - ndim:]) for u in fields.values()])


def unstack_fields(u, leading: dict) -> dict:
    """:func:`stack_fields` undone; ``leading``: each field's leading shape, in order."""
    ends = np.cumsum([math.prod(lead) for lead in leading.values()])[:-1]
    return {name: part.reshape(*lead, *part.shape[1:])
            for (name, lead), part in zip(leading.items(), jnp.split(u, ends), strict=True)}


def transform_fields(transform, fields: dict, grid, batched: bool | None = None) -> dict:
    """``transform`` (:func:`to_fourier` or :func:`from_fourier`) of every field.
    ``batched``: the fields stacked and transformed in one call; by default so on an
    accelerator, where each FFT is a launch of its own, and not on a CPU, where the
    separate transforms run side by side on its cores."""
    if batched is None:
        batched = jax.default_backend() != "cpu"
    if len(fields) == 1 or not batched:
        return {name: transform(u, grid) for name, u in fields.items()}
    leading = {name: u.shape[:u.ndim - grid.ndim] for name, u in fields.items()}
    return unstack_fields(transform(stack_fields(fields, grid.ndim), grid), leading)


def dealias_mask(grid, fraction: float = 2 / 3) -> np.ndarray:
    """1 where every ``|k_i|`` is below ``fraction`` of the axis's highest wavenumber, else 0
    (Orszag's 2/3 rule for quadratic terms), in ``rfftn``'s layout."""
    mask = np.ones(fourier_shape(grid), dtype=bool)
    for axis, k in enumerate(wavenumbers(grid)):
        k_max = np.pi / grid.spacing[axis]
        mask &= np.abs(k) < fraction * k_max
    return mask.astype(float)


def burgers_term(u_hat, grid, fraction: float = 2 / 3):
    """``-(u^2)_x / 2`` in Fourier space from ``u``'s transform on a periodic line,
    dealiased by keeping ``fraction`` of the modes (the nonlinearity of Burgers' and
    Kuramoto-Sivashinsky's equations)."""
    u = from_fourier(jnp.asarray(dealias_mask(grid, fraction)) * u_hat, grid)
    return -0.5 * jnp.asarray(derivative_multiplier(grid, 0, 1)) * to_fourier(u * u, grid)
