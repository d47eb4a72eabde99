"""The built-in library: every registered model honours the model contract."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

from difflab.models import available, get

DOMAINS = {"mechanics", "chaos", "biology", "fields", "stochastic", "neural", "oscillators"}
NAMES = available()


def test_library_has_the_builtin_models():
    assert len(NAMES) >= 12
    assert {"pendulum", "lorenz", "kuramoto", "van_der_pol", "ornstein_uhlenbeck"} <= set(NAMES)


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("lorenzz", "lorenz"), ("van_der_poll", "van_der_pol"), ("spring-chain", "spring_chain")],
)
def test_misspelled_name_suggests_close_matches(typo, meant):
    with pytest.raises(ValueError, match=f"unknown model '{typo}'; did you mean .*{meant}"):
        get(typo)


def test_unknown_name_raises_value_error():
    with pytest.raises(ValueError, match="unknown model 'quantum_gravity'"):
        get("quantum_gravity")


@pytest.mark.parametrize("name", NAMES)
def test_model_class_is_documented(name):
    cls = get(name)
    assert cls.registry_name == name
    assert cls.domain in DOMAINS
    assert cls.description and "\n" not in cls.description
    assert cls.__doc__ and cls.__doc__.strip()
    for spec in cls.parameter_specs().values():
        assert spec.doc and "\n" not in spec.doc


@pytest.mark.parametrize("name", NAMES)
def test_defaults_lie_within_bounds_and_are_the_instance_values(name):
    cls = get(name)
    specs = cls.parameter_specs()
    assert specs, f"{name} declares no parameters"
    values = cls().parameters()
    for pname, spec in specs.items():
        lo, hi = spec.bounds
        assert lo <= spec.default <= hi, pname
        assert float(values[pname]) == spec.default, pname


@eqx.filter_jit
def _start(model):
    y0 = model.initial_state()
    return y0, model.vector_field(jnp.zeros(()), y0)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_fits_state_names_and_vector_field_is_finite(name):
    model = get(name)()
    y0, dy = _start(model)
    names = model.state_names
    assert len(set(names)) == len(names)
    assert y0.shape == dy.shape == (len(names),)
    assert np.all(np.isfinite(y0)) and np.all(np.isfinite(dy))
