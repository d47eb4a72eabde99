"""Names a sweep's variables share with the session file (``docs/hdf5-schema.md``)."""


def index_dimension(observable: str) -> str:
    """The dimension along the values of an observable that keeps a vector per point
    (as session files name it too)."""
    return f"{observable}_index"
