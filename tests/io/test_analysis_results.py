"""Analysis results in session files: equilibria, continuations (with their special
points), curves in two parameters, periodic orbits, Poincare sections and Lyapunov
spectra are stored under ``/analyses`` with their model and read back as the same
classes; xarray, h5py and h5dump read the groups as they are."""

import dataclasses
import shutil
import subprocess
from pathlib import Path

import equinox as eqx
import h5py
import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import difflab as dl
from difflab.io import SessionFileError

OLD_FILE = Path(__file__).parent / "data" / "labels_v1.h5"  # written before analyses


class FoldHopf(dl.Model):
    """``x' = r - x^2`` (a fold at r = 0, x = 0) driving a Hopf normal form
    ``w' = (x - 1 + i) w - w |w|^2`` in ``w = y + i z``: on the branch ``x = sqrt(r)``
    a supercritical Hopf point at r = 1 with frequency 1 and ``l1 = -2``."""

    r: float = dl.param(2.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y", "z")

    def vector_field(self, t, s):
        x, y, z = s
        mu, r2 = x - 1.0, y**2 + z**2
        return jnp.stack([self.r - x**2, mu * y - z - y * r2, y + mu * z - z * r2])

    def initial_state(self):
        return jnp.array([1.4, 0.0, 0.0])


class FoldBautin(dl.Model):
    """``x' = r - x^2`` (a fold at r = 0, x = 0 for every b) driving the Bautin normal
    form ``w' = (mu + i) w + b w |w|^2 - w |w|^4``, ``mu = x - 1``: a Hopf point at r = 1
    for every b, subcritical for b > 0, a Bautin point at b = 0, and for b = 1 a fold of
    cycles where ``mu = -b^2 / 4`` (r = 9/16), of radius ``sqrt(b / 2)`` and period 2 pi."""

    r: float = dl.param(0.5, bounds=(-5.0, 5.0))
    b: float = dl.param(1.0, bounds=(-5.0, 5.0))
    state_names = ("x", "y", "z")

    def vector_field(self, t, s):
        x, y, z = s
        r2 = y**2 + z**2
        g = x - 1.0 + self.b * r2 - r2**2
        return jnp.stack([self.r - x**2, g * y - z, y + g * z])

    def initial_state(self):
        return jnp.array([0.7, 0.0, 0.0])


def _bautin_results() -> dict:
    model = FoldBautin()
    fold, hopf = sorted(dl.continuation(model, "r", 0.5, 1.5, state=[0.7, 0, 0]).special
                        + dl.continuation(model, "r", 0.5, -0.5).special,
                        key=lambda p: p.kind)
    curve = dict(max_points=30)
    return {
        "fold_curve": dl.continuation(model, ("r", "b"), -1.0, 2.0, from_point=fold, **curve),
        "hopf_curve": dl.continuation(model, ("r", "b"), -1.0, 2.0, from_point=hopf, **curve),
        "orbits": dl.periodic_orbits(model, "r", hopf, 0.5, 1.5, segments=4, steps=120,
                                     max_points=16, ds=0.1, ds_max=0.2),
        "section": dl.poincare(model.replace(r=4.0), "z", 20.0, transient=20.0,
                               y0=[2.0, 0.5, 0.0]),
        "no_crossings": dl.poincare(model, "z", 1.0, y0=[0.7, 0.0, 0.0]),
    }


@pytest.fixture(scope="module")
def results():
    lorenz = dl.models.get("lorenz")(rho=10.0)
    return {
        "equilibria": dl.equilibria(lorenz, n_starts=16, box={"z": (-1.0, 40.0)}),
        "unboxed": dl.equilibria(lorenz, n_starts=16),
        "none": dl.equilibria(lorenz, n_starts=16, box={"z": (-50.0, -40.0)}),
        "branch": dl.continuation(FoldHopf(), "r", 2.0, -1.0),
        "quiet": dl.continuation(FoldHopf(), "r", 3.0, 2.0),  # no special points
        "spectrum": dl.lyapunov(dl.models.get("lorenz")(), 2.0, dt=0.01),
        **_bautin_results(),
    }


@pytest.fixture(scope="module")
def path(results, tmp_path_factory):
    path = tmp_path_factory.mktemp("analyses") / "analyses.h5"
    with dl.io.write_session(path) as writer:
        for name, result in results.items():
            assert dl.io.add(writer, result, name=name) == name
    return path


def assert_same(a, b):
    """Equal fields (arrays, labels, nested special points), the same class, the same model."""
    assert type(a) is type(b)
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if field.name == "model":
            params = y.parameters() if isinstance(y, dl.Model) else y.parameters
            assert {k: float(v) for k, v in params.items()} == {
                k: float(v) for k, v in x.parameters().items()}
        elif isinstance(x, eqx.Module):  # a special point
            assert_same(x, y)
        elif isinstance(x, tuple) and x and isinstance(x[0], eqx.Module):
            assert len(x) == len(y)
            for p, q in zip(x, y):
                assert_same(p, q)
        elif x is None or isinstance(x, (str, tuple, float, int)):
            assert x == y, field.name
        else:
            np.testing.assert_array_equal(np.asarray(y), np.asarray(x), err_msg=field.name)


def test_the_fold_and_hopf_branch_is_what_the_normal_forms_say(results):
    """The branch the round trips below store, checked against its normal forms."""
    fold, hopf = sorted(results["branch"].special, key=lambda p: p.kind)
    assert (fold.kind, hopf.kind) == ("fold", "hopf")
    assert abs(fold.value) < 1e-9 and hopf.value == pytest.approx(1.0, abs=1e-9)
    assert hopf.frequency == pytest.approx(1.0, rel=1e-9)
    assert hopf.lyapunov_coefficient == pytest.approx(-2.0, rel=1e-6)
    assert fold.frequency is None and fold.lyapunov_coefficient is None


def test_the_curves_orbits_and_sections_are_what_the_normal_forms_say(results):
    """The results of FoldBautin the round trips store, checked against its normal form."""
    fold, hopf = results["fold_curve"], results["hopf_curve"]
    assert fold.params == hopf.params == ("r", "b") and fold.frequency is None
    np.testing.assert_allclose(fold.values[:, 0], 0.0, atol=1e-9)  # r = 0 for every b
    np.testing.assert_allclose(hopf.values[:, 0], 1.0, atol=1e-9)  # r = 1 for every b
    np.testing.assert_allclose(hopf.frequency, 1.0, rtol=1e-9)
    (bautin,) = hopf.special
    assert bautin.kind == "bautin" and bautin.values == pytest.approx([1.0, 0.0], abs=1e-6)
    orbits = results["orbits"]
    (lpc,) = orbits.special
    assert lpc.kind == "fold-of-cycles" and lpc.value == pytest.approx(9 / 16, abs=1e-6)
    assert lpc.period == pytest.approx(2 * np.pi, rel=1e-6)
    assert lpc.maximum[1:] == pytest.approx([0.5**0.5] * 2, rel=1e-5)
    assert orbits.hopf.kind == "hopf" and orbits.hopf.value == pytest.approx(1.0, abs=1e-9)
    section = results["section"]  # r = 4: x = 2, mu = 1, |w|^2 = golden ratio
    np.testing.assert_allclose(section["y"], ((1 + 5**0.5) / 2) ** 0.5, rtol=1e-8)
    np.testing.assert_allclose(section.return_times, 2 * np.pi, rtol=1e-8)
    assert results["no_crossings"].found == 0


@pytest.mark.parametrize("name", ["equilibria", "unboxed", "none", "branch", "quiet",
                                  "spectrum", "fold_curve", "hopf_curve", "orbits",
                                  "section", "no_crossings"])
def test_each_result_reads_back_as_the_same_class(results, path, name):
    back = dl.open(path).analyses[name]
    assert_same(results[name], back)


def test_read_back_values_and_models(results, path):
    session = dl.open(path)
    assert session.analyses.names() == list(results)
    branch = session.analyses["branch"]
    hopf = next(p for p in branch.special if p.kind == "hopf")
    assert hopf.criticality == "supercritical" and hopf.frequency == pytest.approx(1.0)
    assert branch.param == "r" and (branch.start, branch.stop) == (2.0, -1.0)
    assert branch.stable.dtype == bool and np.iscomplexobj(branch.eigenvalues)
    assert session.analyses["quiet"].special == ()
    assert session.analyses["unboxed"].box is None
    assert len(session.analyses["none"]) == 0 and session.analyses["none"].states.shape == (0, 3)
    assert session.analyses["equilibria"].box == ((-10.0, 10.0), (-10.0, 10.0), (-1.0, 40.0))
    assert session.analyses["equilibria"].model.rho == 10.0  # a built-in model is rebuilt
    assert isinstance(branch.model, dl.io.ModelRecord)  # a user model's code is not run
    assert branch.model.parameters == {"r": 2.0}
    stored = session.stored("analyses", "spectrum")
    assert stored.attrs["analysis"] == "lyapunov_spectrum" and stored.complete
    assert stored.provenance["difflab_version"] == dl.__version__
    assert stored.settings == {"t1": 2.0, "dt": pytest.approx(0.01)}


def test_every_field_of_every_stored_class_has_a_codec():
    """A field added to an analysis class without a codec would be lost on saving."""
    from difflab.io import _analyses, _codecs

    for fmt in _analyses.FORMATS.values():
        fields = {f.name for f in dataclasses.fields(fmt.cls)}
        assert fields == set(fmt.fields) | set(_analyses.COMMON), fmt.name
        for codec in fmt.fields.values():
            if isinstance(codec, _codecs.Table):
                assert {f.name for f in dataclasses.fields(codec.cls)} == set(codec.fields)


class Mark(eqx.Module):
    label: str = eqx.field(static=True)
    where: np.ndarray


class Crossings(eqx.Module):
    """A made-up analysis class, stored by one registration as a new one would be."""

    ys: np.ndarray
    multipliers: np.ndarray
    first: Mark | None
    window: tuple[float, float]
    params: tuple[str, str]
    weights: np.ndarray | None
    count: int
    section: str = eqx.field(static=True)
    state_names: tuple[str, ...] = eqx.field(static=True)
    model: object


@pytest.fixture
def crossings():
    from difflab.io import _analyses
    from difflab.io._codecs import Array, Attribute, Complex, Labels, Single

    _analyses.register(Crossings, "crossings", ys=Array("crossing", "state"),
                       multipliers=Complex("crossing"),
                       first=Single(Mark, "first", label=Labels(), where=Array("state")),
                       window=Attribute(tuple), params=Attribute(tuple),
                       weights=Array("crossing", optional=True), count=Attribute(int),
                       section=Attribute(str))
    yield
    del _analyses.FORMATS["crossings"]


@pytest.mark.parametrize("first", [None, Mark("entry", np.array([1.0, 2.0, 3.0]))])
def test_a_new_class_is_stored_by_one_registration(crossings, tmp_path, first):
    model = dl.models.get("lorenz")()
    result = Crossings(ys=np.arange(6.0).reshape(2, 3), multipliers=np.array([1j, -0.5]),
                       first=first, window=(0.0, 5.0), params=("rho", "beta"),
                       weights=None if first is None else np.array([0.5, 1.5]), count=7,
                       section="x = 0", state_names=("x", "y", "z"), model=model)
    dl.io.save(tmp_path / "c.h5", result, name="c")
    back = dl.open(tmp_path / "c.h5").analyses["c"]
    assert (back.window, back.params, back.count, back.section) == (
        (0.0, 5.0), ("rho", "beta"), 7, "x = 0")
    if first is None:
        assert back.weights is None
    else:
        np.testing.assert_array_equal(back.weights, result.weights)
    np.testing.assert_array_equal(back.ys, result.ys)
    np.testing.assert_array_equal(back.multipliers, result.multipliers)
    assert back.first is None if first is None else (
        back.first.label == "entry" and np.array_equal(back.first.where, first.where))
    with xr.open_dataset(tmp_path / "c.h5", group="analyses/c", engine="h5netcdf") as ds:
        assert ds.sizes["first"] == (first is not None) and ds["first_where"].dims == ("first", "state")


def _xr(path, group, engine="h5netcdf"):
    return xr.open_dataset(path, group=group, engine=engine)


@pytest.mark.parametrize("engine", ["h5netcdf", "netcdf4"])
def test_xarray_reads_the_groups(results, path, engine):
    branch, found = results["branch"], results["equilibria"]
    with _xr(path, "analyses/branch", engine) as ds:
        assert ds["states"].dims == ("point", "state") and list(ds["state_name"].values) == list("xyz")
        np.testing.assert_array_equal(ds["values"].values, branch.values)
        np.testing.assert_array_equal(ds["eigenvalues_real"] + 1j * ds["eigenvalues_imag"],
                                      branch.eigenvalues)
        np.testing.assert_array_equal(ds["stable"].values.astype(bool), branch.stable)
        assert list(ds["special_kind"].values) == [p.kind for p in branch.special]
        assert ds.attrs["analysis"] == "continuation" and ds.attrs["param"] == "r"
        for name, var in ds.variables.items():
            assert "long_name" in var.attrs, name
    with _xr(path, "analyses/equilibria", engine) as ds:
        assert list(ds["stability"].values) == list(found.stability)
        np.testing.assert_array_equal(ds["box_hi"].values, [10.0, 10.0, 40.0])
    with _xr(path, "analyses/quiet", engine) as ds:
        assert ds.sizes["special"] == 0 and ds["special_kind"].size == 0
    with _xr(path, "analyses/spectrum", engine) as ds:
        np.testing.assert_array_equal(ds["history"].values, results["spectrum"].history)


def test_xarray_reads_curves_orbits_and_sections(results, path):
    hopf, fold, orbits = results["hopf_curve"], results["fold_curve"], results["orbits"]
    with _xr(path, "analyses/hopf_curve") as ds:
        assert ds.attrs["analysis"] == "bifurcation_curve" and ds.attrs["kind"] == "hopf"
        assert ds["values"].dims == ("point", "param")
        assert [p.decode() for p in ds.attrs["params"]] == ["r", "b"]  # fixed-length text
        np.testing.assert_array_equal(ds["lyapunov_coefficients"].values,
                                      hopf.lyapunov_coefficients)
        np.testing.assert_array_equal(ds["special_values"].values, hopf.special[0].values[None])
    with _xr(path, "analyses/fold_curve") as ds:
        assert "frequency" not in ds and "lyapunov_coefficients" not in ds
        assert ds.sizes["special"] == 0 and ds.sizes["point"] == len(fold.values)
    with _xr(path, "analyses/orbits") as ds:
        assert ds.attrs["analysis"] == "periodic_orbits" and ds.sizes["hopf"] == 1
        np.testing.assert_array_equal(ds["multipliers_real"] + 1j * ds["multipliers_imag"],
                                      orbits.multipliers)
        np.testing.assert_array_equal(ds["maxima"].values, orbits.maxima)
        assert list(ds["special_kind"].values) == ["fold-of-cycles"]
        assert float(ds["hopf_value"][0]) == orbits.hopf.value
        for name, var in ds.variables.items():
            assert "long_name" in var.attrs, name
    with _xr(path, "analyses/section") as ds:
        assert ds["ys"].dims == ("crossing", "state") and ds.attrs["section"] == "z = 0"
        np.testing.assert_array_equal(ds["ts"].values, results["section"].ts)
    with _xr(path, "analyses/no_crossings") as ds:
        assert ds.sizes["crossing"] == 0 and ds["ys"].shape == (0, 3) and ds.attrs["found"] == 0


def test_the_range_of_periodic_orbits_is_not_named_like_cf_bounds(results, path, tmp_path):
    """Before: the attribute was ``bounds``, which CF reserves for cell boundaries; files
    written so still open, and are saved with the new name."""
    with h5py.File(path, "r") as f:
        assert "bounds" not in f["analyses/orbits"].attrs
        np.testing.assert_array_equal(f["analyses/orbits"].attrs["parameter_range"],
                                      results["orbits"].bounds)
    old = tmp_path / "old.h5"
    shutil.copy(path, old)
    with h5py.File(old, "r+") as f:
        attrs = f["analyses/orbits"].attrs
        attrs["bounds"] = attrs["parameter_range"]
        del attrs["parameter_range"]
    assert dl.open(old).analyses["orbits"].bounds == results["orbits"].bounds
    dl.io.save(tmp_path / "again.h5", dl.open(old))
    with h5py.File(tmp_path / "again.h5", "r") as f:
        assert "parameter_range" in f["analyses/orbits"].attrs
        assert "bounds" not in f["analyses/orbits"].attrs


def test_h5py_reads_plain_datasets_with_dimension_scales(results, path):
    with h5py.File(path) as f:
        group = f["analyses/branch"]
        assert [list(d.keys()) for d in group["states"].dims] == [["point"], ["state"]]
        np.testing.assert_array_equal(group["special_value"][()],
                                      [p.value for p in results["branch"].special])
        kinds = [b"".join(row).decode() for row in group["special_kind"][()]]
        assert kinds == [p.kind for p in results["branch"].special]
        assert group.attrs["model"].decode() in f["models"]


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump not installed (hdf5-tools)")
def test_h5dump_reads_the_file(path):
    header = subprocess.run(["h5dump", "-H", str(path)], capture_output=True, text=True,
                            timeout=60, check=True)
    assert 'GROUP "analyses"' in header.stdout and 'DATASET "special_state"' in header.stdout
    done = subprocess.run(["h5dump", "-d", "/analyses/branch/special_value", str(path)],
                          capture_output=True, text=True, timeout=60, check=True)
    assert "DATASPACE  SIMPLE { ( 2 ) / ( 2 ) }" in done.stdout


def test_save_adds_by_name_and_overwrites_only_when_asked(results, tmp_path):
    out = tmp_path / "s.h5"
    assert dl.io.save(out, results["spectrum"]) == "lyapunov_spectrum0"
    assert dl.io.save(out, results["quiet"]) == "continuation0"
    with pytest.raises(SessionFileError, match="analysis 'continuation0' is already"):
        dl.io.save(out, results["branch"], name="continuation0")
    dl.io.save(out, results["branch"], name="continuation0", overwrite=True)
    session = dl.open(out)
    assert session.analyses.names() == ["lyapunov_spectrum0", "continuation0"]
    assert_same(results["branch"], session.analyses["continuation0"])
    with pytest.raises(TypeError, match="cannot save a SpecialPoint"):
        dl.io.save(out, results["branch"].special[0])


def test_saving_a_session_again_keeps_its_analyses(results, path, tmp_path):
    copy = tmp_path / "copy.h5"
    shutil.copyfile(path, copy)
    dl.io.save(copy, dl.open(copy))  # rewritten whole, in the current schema
    dl.io.save(tmp_path / "other.h5", dl.open(copy))
    for name in (copy, tmp_path / "other.h5"):
        assert_same(results["branch"], dl.open(name).analyses["branch"])


def test_a_file_written_before_analyses_opens_and_takes_them(results, tmp_path):
    old = dl.open(OLD_FILE)
    assert len(old.analyses) == 0 and old.runs.names() == ["run0"]
    copy = tmp_path / "old.h5"
    shutil.copyfile(OLD_FILE, copy)
    dl.io.save(copy, results["equilibria"])
    session = dl.open(copy)
    assert session.analyses.names() == ["equilibria0"] and session.runs.names() == ["run0"]
    np.testing.assert_array_equal(session.runs[0].ys, old.runs[0].ys)


def _edit(path, change):
    with h5py.File(path, "r+") as f:
        change(f["analyses"])


def _replace(name, data):
    def change(g):
        del g[name]
        g[name] = data
    return change


HOSTILE = {
    "no analysis attribute": (lambda g: g["branch"].attrs.__delitem__("analysis"),
                              "missing attribute 'analysis'"),
    "analysis a number": (lambda g: g["branch"].attrs.__setitem__("analysis", 3),
                          "attribute 'analysis' has the wrong type"),
    "start as text": (lambda g: g["branch"].attrs.__setitem__("start", np.bytes_(b"0")),
                      "attribute 'start' has the wrong type"),
    "no status": (lambda g: g["branch"].attrs.__delitem__("status"), "missing attribute 'status'"),
    "states missing": (lambda g: g["branch"].__delitem__("states"), "'states' is missing"),
    "states wrong shape": (_replace("branch/states", np.zeros((2, 3))), "has shape (2, 3)"),
    "kinds as numbers": (_replace("branch/special_kind", np.zeros(2)), "'special_kind' has dtype"),
    "eigenvalues as text": (_replace("equilibria/eigenvalues_imag", np.array([[b"a"] * 3] * 3)),
                            "'eigenvalues_imag' has dtype"),
    "ghost model": (lambda g: g["spectrum"].attrs.__setitem__("model", "ghost"), "model 'ghost'"),
    "bad name": (lambda g: g.move("spectrum", "9 lives"), "invalid result name"),
    "a dataset, not a group": (lambda g: g.__setitem__("analyses", np.zeros(3)), None),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_damaged_analysis_group_is_a_session_file_error(path, tmp_path, case):
    change, message = HOSTILE[case]
    copy = tmp_path / "hostile.h5"
    shutil.copyfile(path, copy)
    _edit(copy, change)
    if message is None:  # a member that is not a group is ignored, like in /runs
        assert dl.open(copy).analyses.names() == list(dl.open(path).analyses.names())
        return
    with pytest.raises(SessionFileError) as caught:
        dl.open(copy)
    assert str(caught.value).startswith(f"{copy}: ") and message in str(caught.value)


def test_an_analysis_of_a_newer_difflab_is_ignored(path, tmp_path):
    copy = tmp_path / "newer.h5"
    shutil.copyfile(path, copy)
    _edit(copy, lambda g: g["quiet"].attrs.__setitem__("analysis", "strange_attractor"))
    assert "quiet" not in dl.open(copy).analyses.names()
    assert len(dl.open(copy).analyses) == len(dl.open(path).analyses) - 1
