"""The bifurcation diagram of the current model: branches of equilibria and of periodic
orbits against a parameter.

Qt-free. A :class:`BifurcationRequest` names the parameter, its range and the state to
start from; :func:`run_continuation` continues (:func:`difflab.continuation`) the
equilibrium nearest that state from the start of the range, then the other branch
through each branch point on the way (Lorenz's C+ and C- through the pitchfork at
``rho = 1``), then every equilibrium found at the end of the range
(:func:`difflab.equilibria`) that no branch has reached yet, back towards the start;
then the periodic orbits born
at each Hopf point (:func:`difflab.periodic_orbits`), but one where an earlier branch of
orbits ended. What fails on the way is kept in words (the diagram is then partial).
The :class:`BifurcationDiagram` cuts the branches into stable and unstable
pieces for drawing (an orbit drawn by its least and greatest value of a state), labels
the special points (fold ``LP``, Hopf ``H``, branch point ``BP``, fold of cycles ``LPC``,
period doubling ``PD``, Neimark-Sacker ``NS``, branch point of cycles ``BPC``) and finds
the point nearest a click; :func:`switch_cycles` adds the branch of orbits that starts at a
``PD`` or ``BPC`` point (the doubled orbits, the other branch).
"""

import dataclasses

import numpy as np

import difflab as dl

LABELS = {"fold": "LP", "hopf": "H", "branch": "BP", "fold-of-cycles": "LPC",
          "period-doubling": "PD", "neimark-sacker": "NS", "branch-point-of-cycles": "BPC"}
SWITCHES = {"period-doubling": "the doubled orbits",  # what a click there continues
            "branch-point-of-cycles": "the other branch of orbits"}
MAX_BRANCHES = 12  # branches of equilibria in one diagram


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
    cycles: bool = True  # the periodic orbits born at the Hopf points too

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
class CyclePiece:
    """A run of orbits of one branch with one stability: parameter ``values`` and each
    orbit's ``minima`` and ``maxima`` (k, n)."""

    values: np.ndarray
    minima: np.ndarray
    maxima: np.ndarray
    stable: bool


@dataclasses.dataclass(frozen=True)
class BifurcationDiagram:
    """The branches (each a :class:`difflab.Continuation`) and branches of periodic
    orbits (``cycles``, each a :class:`difflab.PeriodicOrbits`) computed for ``request``."""

    request: BifurcationRequest
    branches: tuple
    cycles: tuple = ()
    notes: tuple[str, ...] = ()  # what failed on the way: the diagram is partial

    @property
    def partial(self) -> bool:
        return bool(self.notes)

    @property
    def state_names(self) -> tuple[str, ...]:
        return tuple(self.request.model.state_names)

    @property
    def results(self) -> tuple:
        """The branches, then the branches of periodic orbits: what a session keeps."""
        return (*self.branches, *self.cycles)

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
        """``(label, parameter value, value of state)`` of each special point; a special
        point of periodic orbits at its orbit's greatest value of ``state``."""
        k = self.state_names.index(state)
        return [(LABELS.get(p.kind, p.kind), float(p.value), float(np.asarray(p.state)[k]))
                for p in self.special_points()] + \
            [(LABELS.get(p.kind, p.kind), float(p.value), float(np.asarray(p.maximum)[k]))
             for orbits in self.cycles for p in orbits.special]

    def cycle_pieces(self) -> list[CyclePiece]:
        """Every branch of periodic orbits cut where its stability changes, at the special
        point located there (else half way), so neighbouring pieces share an end."""
        out = []
        for orbits in self.cycles:
            stable = np.asarray(orbits.stable, dtype=bool)
            arrays = [np.asarray(a) for a in (orbits.values, orbits.minima, orbits.maxima)]
            cuts = (np.flatnonzero(stable[1:] != stable[:-1]) + 1).tolist()
            start = [a[:0] for a in arrays]
            for a, b in zip([0, *cuts], [*cuts, len(stable)]):
                join = _cycle_join(orbits, b) if b < len(stable) else [x[:0] for x in arrays]
                out.append(CyclePiece(*(np.concatenate([s0, x[a:b], j])
                                        for s0, x, j in zip(start, arrays, join)),
                                      bool(stable[a])))
                start = join
        return out

    def cycle_point_near(self, value: float, y: float, state: str, scale=(1.0, 1.0),
                         within: float = 0.03):
        """The special point of periodic orbits drawn nearest ``(value, y)`` (at its
        orbit's greatest value of ``state``), if it is within ``within`` of it (distances
        divided by ``scale``, the size of the view); else ``None``."""
        k = self.state_names.index(state)
        points = [p for orbits in self.cycles for p in orbits.special]
        d = [np.hypot((float(p.value) - value) / scale[0],
                      (float(np.asarray(p.maximum)[k]) - y) / scale[1]) for p in points]
        return points[int(np.argmin(d))] if d and min(d) <= within else None

    def nearest(self, value: float, y: float, state: str, scale=(1.0, 1.0)) -> float | None:
        """The parameter value of the point nearest ``(value, y)`` in the drawing of
        ``state`` (distances divided by ``scale``, the size of the view): a point of a
        branch of equilibria, or an orbit's least or greatest value of ``state``."""
        k = self.state_names.index(state)
        curves = [(b.values, np.asarray(b.states)[:, k]) for b in self.branches]
        curves += [(c.values, np.asarray(extreme)[:, k]) for c in self.cycles
                   for extreme in (c.minima, c.maxima)]
        best, best_d = None, np.inf
        for values, ys in curves:
            values = np.asarray(values)
            d = np.hypot((values - value) / scale[0], (ys - y) / scale[1])
            if len(d) and d.min() < best_d:
                best, best_d = float(values[np.argmin(d)]), float(d.min())
        return best


def _cycle_join(orbits, c) -> list[np.ndarray]:
    """``[value, minimum, maximum]`` (one row each) where stability changes between orbits
    ``c - 1`` and ``c``: the special point located there (no farther from their middle
    than they are apart: past both at a fold), else half way."""
    arrays = [np.asarray(a) for a in (orbits.values, orbits.minima, orbits.maxima)]
    values, maxima = arrays[0][c - 1:c + 1], arrays[2][c - 1:c + 1]
    apart = np.hypot(values[1] - values[0], np.linalg.norm(maxima[1] - maxima[0]))
    near = [(np.hypot(float(p.value) - values.mean(),
                      np.linalg.norm(np.asarray(p.maximum) - maxima.mean(axis=0))), i)
            for i, p in enumerate(orbits.special)]
    near = [(d, i) for d, i in near if d <= apart]
    if not near:
        return [a[c - 1:c + 1].mean(axis=0, keepdims=True) for a in arrays]
    point = orbits.special[min(near)[1]]
    return [np.array([float(point.value)]), np.asarray(point.minimum)[None],
            np.asarray(point.maximum)[None]]


def _on_a_branch(state, value, branches, tol) -> bool:
    for branch in branches:
        near = np.abs(np.asarray(branch.values) - value) <= tol * 10
        if near.any() and np.min(np.linalg.norm(
                np.asarray(branch.states)[near] - state, axis=1)) < tol * (1 + np.linalg.norm(state)):
            return True
    return False


def _ends_at(orbits, hopf, span) -> bool:
    """Whether a branch of orbits ended by shrinking onto the Hopf point ``hopf``."""
    last, x = np.asarray(orbits.states)[-1], np.asarray(hopf.state)
    return orbits.status.startswith("shrank") \
        and abs(float(orbits.values[-1]) - float(hopf.value)) < 1e-3 * span \
        and np.linalg.norm(last - x) < 1e-2 * (1 + np.linalg.norm(x))


def _cycles(request, branches, stop, notes) -> tuple:
    """The periodic orbits born at each Hopf point on ``branches``, in the request's
    range; none from a Hopf point where an earlier branch of orbits ended. A failure is
    added to ``notes`` in words."""
    span = abs(request.stop - request.start)
    diagram = BifurcationDiagram(request, tuple(branches))
    found, failed = [], []
    for hopf in [p for p in diagram.special_points() if p.kind == "hopf"]:
        if stop():
            break
        if any(_ends_at(orbits, hopf, span) for orbits in found):
            continue
        try:
            found.append(dl.periodic_orbits(request.model, request.param, hopf,
                                            min(request.start, request.stop),
                                            max(request.start, request.stop), t=request.t))
        except (ValueError, ArithmeticError) as error:
            failed.append((float(hopf.value), _words(error)))
    if failed:
        value, words = failed[0]
        more = f" (and {len(failed) - 1} more Hopf points)" if len(failed) > 1 else ""
        notes.append(f"periodic orbits from H at {request.param} = {value:.6g} failed: "
                     f"{words}{more}")
    return tuple(found)


def switch_cycles(diagram: BifurcationDiagram, point) -> BifurcationDiagram:
    """``diagram`` with the branch of periodic orbits that starts at ``point`` (a
    period-doubling point: the doubled orbits; a branch point of cycles: the other branch)
    in the request's range. A :class:`ValueError` in one line where no branch starts
    there (a Neimark-Sacker point: its torus is out of reach). A branch that starts at
    ``point`` already is not added again."""
    request = diagram.request
    if any(float(o.values[0]) == float(point.value)
           and np.array_equal(o.states[0], point.state) for o in diagram.cycles):
        return diagram
    orbits = dl.periodic_orbits(request.model, request.param, point,
                                min(request.start, request.stop),
                                max(request.start, request.stop), t=request.t)
    return dataclasses.replace(diagram, cycles=(*diagram.cycles, orbits))


def _words(error: BaseException) -> str:
    return str(error).strip() or type(error).__name__


def _switched(request, branches, stop, notes) -> None:
    """Add to ``branches`` the other branch through each branch point on them (a
    pitchfork's pair of equilibria), at most :data:`MAX_BRANCHES` in all."""
    done: list = []
    k = 0
    while k < len(branches) and len(branches) < MAX_BRANCHES and not stop():
        for point in [p for p in branches[k].special if p.kind == "branch"]:
            if stop() or len(branches) >= MAX_BRANCHES or _seen(point, done, request):
                continue
            done.append(point)
            try:
                branch = dl.continuation(request.model, request.param, request.start,
                                         request.stop, from_point=point, t=request.t)
            except (ValueError, ArithmeticError) as error:
                notes.append(f"branch from BP at {request.param} = {float(point.value):.6g} "
                             f"failed: {_words(error)}")
                continue
            done.extend(p for p in branch.special if p.kind == "branch")
            branches.append(branch)
        k += 1


def _seen(point, done, request) -> bool:
    """Whether branch point ``point`` is one already switched at (the same place)."""
    scale = abs(request.stop - request.start)
    return any(abs(float(p.value) - float(point.value)) < 1e-6 * scale and np.allclose(
        p.state, point.state, atol=1e-6 * (1 + scale)) for p in done)


def _from_the_end(request, branches, stop, notes) -> None:
    """Add to ``branches`` the equilibria found at the end of the range that no branch has
    reached, each continued back towards the start."""
    model, param = request.model, request.param
    at_end = dl.equilibria(model.replace(**{param: request.stop}), t=request.t)
    tol = 1e-6 * max(1.0, abs(request.stop - request.start))
    for state in np.asarray(at_end.states, dtype=float):
        if stop() or len(branches) >= MAX_BRANCHES:
            break
        if _on_a_branch(state, request.stop, branches, tol):
            continue
        try:
            branches.append(dl.continuation(model.replace(**{param: request.stop}), param,
                                            request.stop, request.start, state=state,
                                            t=request.t))
        except (ValueError, ArithmeticError) as error:
            notes.append(f"branch from the equilibrium at {param} = {request.stop:g} "
                         f"failed: {_words(error)}")


def _first_branch(request):
    """The branch through the equilibrium nearest the request's state at the start of the
    range, else at its end (traced back), else at the model's own value of the parameter
    (towards the end, then the start); a :class:`ValueError` that says what to try
    where there is none at any of them."""
    model, param, lo, hi = request.model, request.param, request.start, request.stop
    own = float(getattr(model, param))
    tries = [(lo, hi), (hi, lo)] + ([(own, hi), (own, lo)] if min(lo, hi) < own < max(lo, hi)
                                    else [])
    first_error = None
    for k, (a, b) in enumerate(tries):
        try:
            branch = dl.continuation(model.replace(**{param: a}), param, a, b,
                                     state=request.seed(), t=request.t)
        except (ValueError, ArithmeticError) as error:
            first_error = first_error or error
            continue
        if k == 0 or np.ptp(branch.values) >= 1e-3 * abs(hi - lo):
            return branch  # not a fallback stuck where it began (equilibria not isolated)
    ends = ", ".join(dict.fromkeys(f"{v:g}" for v, _ in tries))
    raise ValueError(
        f"{_words(first_error)}; none at {param} = {ends} either, near the start state or "
        f"in the search box. {request.model_name} may have no equilibria there (its states "
        "drift, rotate or orbit) or only ones that are not isolated (a line or circle of "
        "them), which a diagram cannot follow. Try the Sweep tab to see how runs change "
        f"with {param}") from first_error


def run_continuation(request: BifurcationRequest, stop=lambda: False) -> BifurcationDiagram:
    """Continue the branch through the request's state, then (unless the request says
    not to) the other branch through each branch point and the branches found at the end
    of the range, then the periodic orbits from the Hopf points; ``stop()`` is checked
    between branches. What failed on the way is in the diagram's ``notes``."""
    branches, notes = [_first_branch(request)], []
    if request.other_branches and not stop():
        _switched(request, branches, stop, notes)
        if not stop():
            _from_the_end(request, branches, stop, notes)
    cycles = _cycles(request, branches, stop, notes) if request.cycles and not stop() else ()
    return BifurcationDiagram(request, tuple(branches), cycles, tuple(notes))
