"""The batch-sharding helpers that sweeps and multi-start fits share."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

# white-box: the sharding helpers themselves (mesh, padding, map_batch, collectives in HLO)
from difflab.solvers import _sharding


def test_each_device_maps_its_own_rows_with_shared_arguments():
    mesh = _sharding.batch_mesh()
    assert mesh.axis_names == ("batch",) and mesh.size == 8
    x = np.arange(13.0)
    n_pad = _sharding.padded_size(len(x), mesh.size)
    padded = _sharding.pad_batch({"x": x}, n_pad)
    assert n_pad == 16 and list(padded["x"][12:]) == [12.0] * 4  # the last row, repeated
    f = jax.jit(_sharding.map_batch(lambda rows, scale: {"y": rows["x"] * scale}, mesh,
                                    replicated=(1,)))
    out = f(_sharding.put_batch(padded, mesh), jnp.float64(3.0))
    assert out["y"].sharding.spec == jax.sharding.PartitionSpec("batch")
    np.testing.assert_array_equal(_sharding.local_rows(out)["y"][:13], 3.0 * x)
    text = f.lower(_sharding.put_batch(padded, mesh), jnp.float64(3.0)).compile().as_text()
    assert _sharding.collectives_in(text) == []


def test_collectives_are_found_where_they_are():
    mesh = _sharding.batch_mesh()
    total = jax.jit(jax.shard_map(lambda x: jax.lax.psum(x, "batch"), mesh=mesh,
                                  in_specs=jax.sharding.PartitionSpec("batch"),
                                  out_specs=jax.sharding.PartitionSpec()))
    text = total.lower(jnp.ones(8)).compile().as_text()
    assert _sharding.collectives_in(text) == ["all-reduce"]


def test_devices_are_chosen_by_count_or_list():
    assert _sharding.batch_mesh(3).size == 3
    assert list(_sharding.batch_mesh(jax.devices()[2:4]).devices) == jax.devices()[2:4]
    assert _sharding.process_rows(16, _sharding.batch_mesh()) == slice(0, 16)
    with pytest.raises(ValueError, match="between 1 and 8"):
        _sharding.batch_mesh(0)
