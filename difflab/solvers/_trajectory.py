"""Trajectory: the saved times and states of one simulation, with its result code."""

import equinox as eqx
import jax
import numpy as np

from ._result import Result, message


class Trajectory(eqx.Module):
    """Saved times ``ts`` (n_save,), states ``ys`` (n_save, n_states) and how the run ended.

    ``traj["x"]`` is the column of state ``x``. ``result`` is a :class:`Result` code;
    ``steps`` the number of steps taken; ``wall_time`` the seconds the run took
    (``None`` when the call was traced, e.g. under ``jax.grad``).
    """

    ts: jax.Array
    ys: jax.Array
    result: jax.Array
    steps: jax.Array
    state_names: tuple[str, ...] = eqx.field(static=True)
    wall_time: float | None = eqx.field(static=True, default=None)

    def __getitem__(self, name: str) -> jax.Array:
        try:
            return self.ys[..., self.state_names.index(name)]
        except ValueError:
            raise KeyError(
                f"no state {name!r}; the states are {', '.join(self.state_names)}"
            ) from None

    @property
    def ok(self) -> bool:
        """True when the run ended successfully."""
        return bool(np.all(np.asarray(self.result) == Result.SUCCESS))

    @property
    def message(self) -> str:
        """How the run ended, in words."""
        return message(np.max(np.asarray(self.result)))

    @property
    def final(self) -> jax.Array:
        """The last saved state."""
        return self.ys[..., -1, :]
