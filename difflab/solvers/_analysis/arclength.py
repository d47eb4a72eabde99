"""The pseudo-arclength engine shared by branches of equilibria and curves of bifurcations.

A curve is ``G(y) = 0`` with one more unknown than equations; its last unknown is the
parameter whose range bounds it. A tracer corrects points on it:
``tracer.correct(y0, c, ds, guess, v)`` runs Newton on ``[G(y); c.(y - y0) - ds]`` from
``guess`` and gives a point ``(y, tangent, ok, newton_steps, ...)`` whose unit tangent is
oriented along ``v``; ``tracer.arclength(y0, v, ds)`` is the step of length ``ds`` along
``v``. The rest of a point's tuple belongs to the tracer and its test functions.
"""

import numpy as np


def check_range(model, param, start, stop) -> None:
    """A ``ValueError`` unless ``param`` is one of the model's and ``start != stop`` are
    finite."""
    specs = model.parameter_specs()
    if param not in specs:
        raise ValueError(f"{type(model).__name__} has no parameter {param!r}; "
                         f"its parameters are {', '.join(specs) or 'none'}")
    if not (np.isfinite(start) and np.isfinite(stop)) or start == stop:
        raise ValueError(f"continuation needs finite start != stop, got {start} and {stop}")


def trace(tracer, first, start, stop, ds, ds_min, ds_max, max_points):
    """Step along the curve from the point ``first`` (in the direction of its tangent)
    until the last unknown leaves ``[start, stop]``: ``(points, steps, status)``."""
    last = np.zeros_like(first[0])
    last[-1] = 1.0
    lo, hi = sorted((start, stop))
    points, steps, status = [first], [], "reached max_points"
    while len(points) < max_points:
        y, v = points[-1][0], points[-1][1]
        new = tracer.arclength(y, v, ds)
        ok, turned = new[2], new[1] @ v < 0.9
        if not ok or turned:
            ds /= 2
            if ds < ds_min:
                status = "step size fell below ds_min"
                break
            continue
        p = new[0][-1]
        if not lo <= p <= hi:  # land on the end of the range and stop
            bound = hi if p > hi else lo
            guess = y + (bound - y[-1]) / (p - y[-1]) * (new[0] - y)
            new = tracer.correct(y, last, bound - y[-1], guess, v)
            if new[2]:
                points.append(new)
                steps.append(float(v @ (new[0] - y)))
            status = f"left the range at {bound:g}"
            break
        points.append(new)
        steps.append(ds)
        if new[3] <= 4:
            ds = min(1.5 * ds, ds_max)
    return points, steps, status


def bisect(tracer, y, v, s_end, same):
    """The point of the step ``y -> s_end`` along ``v`` where ``same(point)`` turns false,
    to about 1e-12 of the step."""
    a, b, at = 0.0, s_end, None
    for _ in range(80):
        if abs(b - a) <= 1e-12 * abs(s_end):
            break
        mid = (a + b) / 2
        point = tracer.arclength(y, v, mid)
        if not point[2]:  # exactly on a singular point: step a little aside
            mid = a + 0.49 * (b - a)
            point = tracer.arclength(y, v, mid)
            if not point[2]:
                break
        if same(point):
            a = mid
        else:
            b, at = mid, point
    return at if at is not None else tracer.arclength(y, v, b)


def sign_changes(tracer, points, steps, tests, values=None):
    """``(k, kind, point)`` for each test ``kind: point -> value`` whose value differs
    between points ``k`` and ``k + 1``, with the point where it changes. ``values``
    may hold a test's values at every point, computed beforehand."""
    values = dict(values or {})
    for kind, test in tests.items():
        if kind not in values:
            values[kind] = [test(p) for p in points]
    found = []
    for k, step in enumerate(steps):
        for kind, test in tests.items():
            was = values[kind][k]
            if was == values[kind][k + 1]:
                continue
            point = bisect(tracer, points[k][0], points[k][1], step,
                           lambda p, test=test, was=was: test(p) == was)
            found.append((k, kind, point))
    return found


def flipped(point):
    """The same point with its tangent reversed."""
    return (point[0], -point[1], *point[2:])


def joined(backward, forward):
    """One curve from two traces that left a start (the same point or two) in opposite
    directions."""
    shared = np.array_equal(backward[0][0], forward[0][0])
    return [flipped(p) for p in reversed(backward[shared:])] + list(forward)
