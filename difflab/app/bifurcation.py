"""The bifurcation diagram of the current model: branches of equilibria against a parameter.

Qt-free. A :class:`BifurcationRequest` names the parameter, its range and the state to
start from; :func:`run_continuation` continues (:func:`difflab.continuation`) the
equilibrium nearest that state from the start of the range, then every equilibrium found
at the end of the range (:func:`difflab.equilibria`) that no branch has reached yet,
back towards the start, so branches born at a bifurcation inside the range (Lorenz's
C+ and C- past the pitchfork at ``rho = 1``) are drawn too. The
:class:`BifurcationDiagram` cuts the branches into stable and unstable pieces for
drawing, labels the special points (fold ``LP``, Hopf ``H``, branch point ``BP``) and
finds the branch point nearest a click.
"""

import dataclasses

import numpy as np

import difflab as dl

LABELS = {"fold": "LP", "hopf": "H", "branch": "BP"}


@dataclasses.dataclass(frozen=True)
class BifurcationRequest:
    """The model at its current values, the parameter ``param`` from ``start`` to
    ``stop``, and ``state``, the state to start near (default: the initial state)."""

    model: dl.Model
    model_name: str
    param: str
    start: float
    stop: float
    state: tuple[float, ...] | None = None
    other_branches: bool = True
    t: float = 0.0

    def __post_init__(self):
        specs = self.model.parameter_specs()
        if self.param not in specs:
            raise ValueError(f"{self.model_name} has no parameter {self.param!r}; its "
                             f"parameters are {', '.join(specs) or 'none'}")
        if not (np.isfinite(self.start) and np.isfinite(self.stop)) or self.start == self.stop:
            raise ValueError(f"the range needs two different finite ends, got "
                             f"{self.start} and {self.stop}")

    def seed(self) -> np.ndarray:
        state = self.model.initial_state() if self.state is None else self.state
        return np.asarray(state, dtype=float)


@dataclasses.dataclass(frozen=True)
class Piece:
    """A run of points of one branch with one stability: parameter ``values`` and
    ``states`` (k, n)."""

    values: np.ndarray
    states: np.ndarray
    stable: bool


@dataclasses.dataclass(frozen=True)
class BifurcationDiagram:
    """The branches (each a :class:`difflab.Continuation`) computed for ``request``."""

    request: BifurcationRequest
    branches: tuple

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(self.request.model.state_names)

    def pieces(self) -> list[Piece]:
        """Every branch cut where its stability changes, at the special point located
        there (else half way), so neighbouring pieces share their end point."""
        out = []
        for branch in self.branches:
            stable = np.asarray(branch.stable, dtype=bool)
            values, states = np.asarray(branch.values), np.asarray(branch.states)
            cuts = np.flatnonzero(stable[1:] != stable[:-1]) + 1
            start = (values[:0], states[:0])
            for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), len(stable)]):
                join = self._join(branch, b) if b < len(stable) else (values[:0], states[:0])
                out.append(Piece(np.concatenate([start[0], values[a:b], join[0]]),
                                 np.concatenate([start[1], states[a:b], join[1]]),
                                 bool(stable[a])))
                start = join
        return out

    @staticmethod
    def _join(branch, c) -> tuple[np.ndarray, np.ndarray]:
        """The point where stability changes between points ``c - 1`` and ``c``."""
        values, states = np.asarray(branch.values), np.asarray(branch.states)
        lo, hi = sorted((values[c - 1], values[c]))
        mid = states[c - 1:c + 1].mean(axis=0)
        inside = [p for p in branch.special if lo <= float(p.value) <= hi]
        if not inside:
            return values[c - 1:c + 1].mean(keepdims=True), mid[None]
        point = min(inside, key=lambda p: np.linalg.norm(np.asarray(p.state) - mid))
        return np.array([float(point.value)]), np.asarray(point.state)[None]

    def special_points(self) -> list[dl.solvers.SpecialPoint]:
        """The special points of all branches, each place once (points that agree to
        1e-6 of the range in the parameter and the state are one: the first is kept, so
        a pitchfork is its branch point, not also the fold the other branch turns at)."""
        kept = []
        scale = abs(self.request.stop - self.request.start)
        for branch in self.branches:
            for point in branch.special:
                same = [p for p in kept if abs(float(p.value) - float(point.value)) < 1e-6 * scale
                        and np.allclose(p.state, point.state, atol=1e-6 * (1 + scale))]
                if not same:
                    kept.append(point)
        return kept

    def labels(self, state: str) -> list[tuple[str, float, float]]:
        """``(label, parameter value, value of state)`` of each special point."""
        k = self.state_names.index(state)
        return [(LABELS.get(p.kind, p.kind), float(p.value), float(np.asarray(p.state)[k]))
                for p in self.special_points()]

    def nearest(self, value: float, y: float, state: str, scale=(1.0, 1.0)) -> float | None:
        """The parameter value of the branch point nearest ``(value, y)`` in the drawing
        of ``state`` (distances divided by ``scale``, the size of the view)."""
        k = self.state_names.index(state)
        best, best_d = None, np.inf
        for branch in self.branches:
            values, ys = np.asarray(branch.values), np.asarray(branch.states)[:, k]
            d = np.hypot((values - value) / scale[0], (ys - y) / scale[1])
            if len(d) and d.min() < best_d:
                best, best_d = float(values[np.argmin(d)]), float(d.min())
        return best


def _on_a_branch(state, value, branches, tol) -> bool:
    for branch in branches:
        near = np.abs(np.asarray(branch.values) - value) <= tol * 10
        if near.any() and np.min(np.linalg.norm(
                np.asarray(branch.states)[near] - state, axis=1)) < tol * (1 + np.linalg.norm(state)):
            return True
    return False


def run_continuation(request: BifurcationRequest, stop=lambda: False) -> BifurcationDiagram:
    """Continue the branch through the request's state, then the other branches found
    at the end of the range; ``stop()`` is checked between branches."""
    model, param = request.model, request.param
    first = dl.continuation(model.replace(**{param: request.start}), param, request.start,
                            request.stop, state=request.seed(), t=request.t)
    branches = [first]
    if request.other_branches and not stop():
        at_end = dl.equilibria(model.replace(**{param: request.stop}), t=request.t)
        tol = 1e-6 * max(1.0, abs(request.stop - request.start))
        for state in np.asarray(at_end.states, dtype=float):
            if stop():
                break
            if _on_a_branch(state, request.stop, branches, tol):
                continue
            try:
                branches.append(dl.continuation(model.replace(**{param: request.stop}), param,
                                                request.stop, request.start, state=state,
                                                t=request.t))
            except ValueError:
                continue
    return BifurcationDiagram(request, tuple(branches))
