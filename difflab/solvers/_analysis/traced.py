"""The refusal, in one line, of analysis functions called under a JAX transformation."""

import jax


def untraced(name: str, *trees) -> None:
    """A one-line ``TypeError`` if any leaf of ``trees`` is a JAX tracer: ``name`` runs
    Python loops on concrete numbers and cannot be differentiated or vmapped."""
    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(trees)):
        raise TypeError(f"dl.{name} cannot be traced by jax.grad, jax.jit or jax.vmap; "
                        f"locate special points differentiably with dl.locate(model, point, "
                        f"param)")
