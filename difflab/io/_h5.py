"""HDF5 plumbing: opening files safely, atomic replacement, chunk shapes, netCDF-style variables.

h5py is imported inside the functions: it adds a third of a second to ``import difflab``.
"""

import contextlib
import errno
import gc
import io
import os
import secrets
import shutil
import stat
import sys
import threading
from pathlib import Path

import numpy as np

from ._errors import SessionFileError
from ._lock import live_writer

# Superblock version 3 (HDF5 1.10 and later): needed for SWMR, readable by every
# HDF5 library and netCDF-C build of the last years.
LIBVER = ("v110", "v110")
CHUNK_BYTES = 1 << 20  # the most bytes one HDF5 chunk holds (1 MiB)
MIN_CHUNK_BYTES = 100 << 10  # aim for chunks of at least 0.1 MiB where the data allows
CACHE_BYTES = 4 << 20  # chunk cache of a writer: a few chunks (aligned blocks bypass it)


def h5py():
    """The h5py module, imported on first use."""
    import h5py as module

    return module


def string_dtype(length: int | None = None):
    """UTF-8 strings of ``length`` bytes (``None``: variable length)."""
    return h5py().string_dtype("utf-8", length)


def fixed_strings(values) -> tuple[np.ndarray, object]:
    """UTF-8 ``values`` (a str or a sequence of str) as fixed-length bytes and their dtype.

    Session files store text at fixed length: it lives in the checksummed object
    headers, not in HDF5's global heap, which has no checksums (a damaged heap can send
    the HDF5 library into an endless loop).
    """
    scalar = isinstance(values, str)
    encoded = [v.encode("utf-8") for v in ([values] if scalar else values)]
    length = max([1, *map(len, encoded)])
    data = np.array(encoded, dtype=f"S{length}")
    return (data[0] if scalar else data), string_dtype(length)


def text(value) -> str | None:
    """A text attribute as ``str`` (stored fixed-length it reads as bytes); else ``None``."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", errors="replace")
    return value if isinstance(value, str) else None


def _written_by_swmr(path) -> bool:
    """True if the superblock (checksum intact) says a SWMR writer has the file open.

    Only then is the file opened in SWMR-read mode: that mode retries every metadata
    read whose checksum fails (a writer may be half-way through it), with pauses, which
    would make a merely damaged file take minutes to refuse.
    """
    with open(path, "rb") as f:
        head = f.read(64)
    version, offsets = head[8], head[9]
    end = 12 + 4 * offsets
    if version < 2 or len(head) < end + 4:
        return False
    checksum_ok = lookup3(head[:end]) == int.from_bytes(head[end : end + 4], "little")
    return checksum_ok and bool(head[11] & 0x4)


def _open_for_reading(path):
    h5 = h5py()
    if live_writer(path):  # it may be written now: read as SWMR readers do, if it can be
        with contextlib.suppress(Exception):
            return h5.File(path, "r", swmr=True)
    try:
        return h5.File(path, "r")
    except OSError as error:
        if "unable to lock file" in str(error):  # a healthy file another program holds
            raise SessionFileError(
                path, "is locked: another program has it open for writing (HDF5 file "
                "lock); close it there or wait for it to finish, then try again") from None
        if "already open for write" not in str(error):
            raise
    if not _written_by_swmr(path):
        raise SessionFileError(
            path, "the file was left open for writing by a process that stopped (or is "
            "still writing it); difflab.io.recover(path) (or `h5clear -s`) marks it closed")
    # Written right now by a SWMR writer, or left so by one that stopped.
    return h5.File(path, "r", swmr=True)


def open_for_reading(path) -> "h5py.File":
    """Open ``path`` read-only, also while a SWMR writer has it open.

    Any failure is a :class:`SessionFileError` naming the file.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise SessionFileError(path, "no such file")
    if os.path.isdir(path):
        raise SessionFileError(path, "is a directory, not a session file")
    with open(path, "rb") as f:
        head = f.read(8)
    if head != b"\x89HDF\r\n\x1a\n":
        raise SessionFileError(path, "not an HDF5 file (so not a DiffLab session)")
    try:
        return _open_for_reading(path)
    except SessionFileError:
        raise
    except Exception as error:  # h5py reports damaged files with many exception types
        raise SessionFileError(path, f"damaged or truncated HDF5 file ({_short(error)})") from None


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def create_file(path, mode: str = "w") -> "h5py.File":
    """A new (``"w"``) or existing (``"a"``, ``"r+"``) file with the session library version."""
    return h5py().File(path, mode, libver=LIBVER, rdcc_nbytes=CACHE_BYTES, rdcc_w0=1.0)


def fsync_path(path) -> None:
    """Flush a file's bytes to disk."""
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
_NO_SPACE_TEXT = ("No space left on device", "errno = 28", "Disk quota exceeded", "errno = 122")


def disk_full(error: BaseException) -> bool:
    """True if ``error`` (an ``OSError``, or HDF5's ``RuntimeError`` at a failed close)
    says the disk or the quota is full."""
    if isinstance(error, OSError) and error.errno in NO_SPACE:
        return True
    return any(text in str(error) for text in _NO_SPACE_TEXT)


class DiskFull(OSError):
    """``OSError(ENOSPC)`` in one line: a write ran, or would run, out of disk."""


def no_space(path, what: str) -> DiskFull:
    """The error of a write that ran out of disk: ``what`` says what became of the file."""
    return DiskFull(errno.ENOSPC, f"no space left on device; {what}", os.fspath(path))


@contextlib.contextmanager
def quiet_failed_closes(hold_stderr: bool = False):
    """Within the block, and as it ends, the HDF5 objects that cannot close because the
    disk is full are not each reported as a traceback on stderr (the write's own error
    says it in one line); other reports still show.

    h5py reports some of them itself (``print_exc``): with ``hold_stderr`` (for short
    writes only) stderr is held back during the block and written out after it, less
    the reports of a full disk.
    """
    if not _quieting.acquire(blocking=False):  # another write is quieting them already
        yield
        return
    previous, held = sys.unraisablehook, io.StringIO()

    def hook(unraisable):
        if not disk_full(unraisable.exc_value):
            previous(unraisable)

    sys.unraisablehook = hook
    stderr, sys.stderr = sys.stderr, (held if hold_stderr else sys.stderr)
    try:
        yield
    except BaseException:
        collect_failed_write()
        raise
    finally:
        sys.unraisablehook, sys.stderr = previous, stderr
        _quieting.release()
        text = held.getvalue()
        if text and not any(t in text for t in _NO_SPACE_TEXT):
            stderr.write(text)


_quieting = threading.Lock()  # one write at a time swaps the process's stderr and hook


def collect_failed_write() -> None:
    """Close the HDF5 objects a failed write left in reference cycles. Called after a
    failure only: a collection frees every cycle there is on the calling thread, and a Qt
    object freed on a worker thread can crash the app (``difflab.gui._gc``)."""
    gc.collect()


def size_text(n: float) -> str:
    """``n`` bytes for people (``"3.2 GiB"``)."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}" if n < 1000 * scale else f"{n / scale:,.0f} {unit}"
    return f"{int(n)} bytes"


def check_free_space(path, need: float, what: str = "writing it") -> None:
    """``OSError(ENOSPC)`` naming the sizes when the disk that holds ``path`` has less
    than ``need`` bytes free (nothing is written); a disk that will not say passes."""
    folder = Path(os.path.abspath(os.fspath(path))).parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if need > free:
        raise DiskFull(errno.ENOSPC, f"not enough disk space: {what} needs about "
                                    f"{size_text(need)}, and {size_text(free)} is free there",
                      os.fspath(path))


def fsync_directory(path) -> None:
    """Make a rename inside the directory of ``path`` durable (no-op where unsupported)."""
    try:
        fd = os.open(Path(path).parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _new_temporary(path: Path) -> str:
    """An empty file ``.<name>.<random>.tmp`` beside ``path``, with the usual permissions."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return str(tmp)
        except FileExistsError:
            continue


@contextlib.contextmanager
def atomic_file(path):
    """Yield a temporary path beside ``path``; on success fsync it and ``os.replace`` it.

    If the block raises (or the process dies), ``path`` is left as it was and the
    temporary file is removed (or, after a kill, left as ``.<name>.*.tmp``).
    """
    path = Path(path)
    tmp = _new_temporary(path)
    try:
        yield tmp
        if path.exists():  # keep the permissions the file had
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        fsync_path(tmp)
        os.replace(tmp, path)
        fsync_directory(path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def chunk_shape(shape: tuple[int, ...], itemsize: int, along: int | None = None):
    """A chunk of at most :data:`CHUNK_BYTES` for a dataset of ``shape``.

    The trailing axes are kept whole as far as they fit; the leading axes take what
    is left. ``along`` (the axis a streamed writer advances on, in blocks of that
    many rows) is divided evenly when it can be, so each block fills whole chunks.
    """
    shape = tuple(max(1, int(n)) for n in shape)
    budget = max(1, CHUNK_BYTES // itemsize)
    chunks = []
    for n in reversed(shape):
        size = max(1, min(n, budget))
        chunks.append(size)
        budget = max(1, budget // size)
    chunks = list(reversed(chunks))
    if along is not None and len(shape) > 1:
        chunks[0] = _even_rows(chunks[0], along, itemsize * int(np.prod(chunks[1:])))
    return tuple(chunks)


def _even_rows(rows: int, block: int, row_bytes: int) -> int:
    """The largest divisor of ``block`` not above ``rows``, unless it makes chunks tiny."""
    best = max(d for d in range(1, min(rows, block) + 1) if block % d == 0)
    if best * row_bytes >= MIN_CHUNK_BYTES or best == rows:
        return best
    return rows


class RowWriter:
    """Writes blocks of rows (axis 0) of one dataset, fast for blocks of whole chunks.

    An uncompressed block that starts on a chunk boundary and covers whole chunks (the
    last may stop at the end of the dataset) goes straight to the file chunk by chunk
    (``H5Dwrite_chunk``), skipping HDF5's gather and its chunk cache; anything else is an
    ordinary write. The dataset's layout is read once, not at every block.
    """

    def __init__(self, dataset):
        self.dataset, self.id = dataset, dataset.id
        self.shape, self.dtype, self.chunks = dataset.shape, dataset.dtype, dataset.chunks
        self.direct = (self.chunks is not None and dataset.compression is None
                       and not dataset.shuffle and dataset.maxshape == self.shape)

    def write(self, start: int, block) -> None:
        """``dataset[start : start + len(block)] = block``."""
        block = np.asarray(block)
        stop, chunks = start + len(block), self.chunks
        if (not self.direct or block.dtype != self.dtype or block.shape[1:] != self.shape[1:]
                or start % chunks[0] or (stop % chunks[0] and stop != self.shape[0])):
            self._ordinary(start, block)
            return
        for offset in np.ndindex(*(-(-n // c) for n, c in zip(block.shape, chunks))):
            corner = tuple(i * c for i, c in zip(offset, chunks))
            piece = block[tuple(slice(a, a + c) for a, c in zip(corner, chunks))]
            if piece.shape != chunks:  # an edge chunk: HDF5 stores it full size
                padded = np.zeros(chunks, dtype=block.dtype)
                padded[tuple(slice(0, n) for n in piece.shape)] = piece
                piece = padded
            self.id.write_direct_chunk((start + corner[0], *corner[1:]),
                                       np.ascontiguousarray(piece))

    def _ordinary(self, start: int, block: np.ndarray) -> None:
        h5 = h5py()
        block = np.ascontiguousarray(block, dtype=self.dtype)
        if block.shape[1:] != self.shape[1:] or start + len(block) > self.shape[0]:
            raise ValueError(f"rows {start}..{start + len(block)} of shape {block.shape[1:]} "
                             f"do not fit a dataset of shape {self.shape}")
        if not len(block):
            return
        file_space = self.id.get_space()
        file_space.select_hyperslab((start, *[0] * (block.ndim - 1)), block.shape)
        self.id.write(h5.h5s.create_simple(block.shape), file_space, block)


def write_rows(dataset, start: int, block) -> None:
    """``dataset[start : start + len(block)] = block`` (see :class:`RowWriter`)."""
    RowWriter(dataset).write(start, block)


LONG_TEXT = 64 << 10  # a text longer than this is kept in a dataset, not an attribute
MAX_LONG_TEXT = 64 << 20  # the longest text a session keeps (a config file's limit)
LONG_TEXT_PREFIX = "text_"  # the dataset ``text_<name>`` holds the attribute ``<name>``
OLD_LONG_TEXT_PREFIX = "text."  # its name in files written before CF names


OLD_PREFIXES = ("param.", "unit.", "static.")  # attribute names before CF names: param_<p>


def prefixed(attrs: dict, prefix: str) -> dict[str, str]:
    """``{name: attribute}`` of the attributes ``<prefix>_<name>`` (``param_rho``)."""
    return {k[len(prefix) + 1:]: k for k in attrs if k.startswith(prefix + "_")}


def with_cf_names(attrs: dict) -> dict:
    """Attributes with the names of older files made CF names: ``param.rho`` becomes
    ``param_rho`` (where both are present, ``param_rho`` is kept)."""
    out = {(k.replace(".", "_", 1) if k.startswith(OLD_PREFIXES) else k): v
           for k, v in attrs.items() if not k.startswith(OLD_PREFIXES)}
    for k, v in attrs.items():
        if k.startswith(OLD_PREFIXES):
            out.setdefault(k.replace(".", "_", 1), v)
    return out


def _set_long_text(obj, name: str, value: str) -> None:
    """A long text attribute of a group, as the scalar dataset ``text_<name>``."""
    size = len(value.encode("utf-8"))
    if size > MAX_LONG_TEXT or not isinstance(obj, h5py().Group):
        raise ValueError(f"the text {name!r} is {size_text(size)} long; a session keeps "
                         f"at most {size_text(MAX_LONG_TEXT if isinstance(obj, h5py().Group) else LONG_TEXT)}")
    key = LONG_TEXT_PREFIX + name
    for old in (key, OLD_LONG_TEXT_PREFIX + name):
        if old in obj:
            del obj[old]
    if name in obj.attrs:
        del obj.attrs[name]
    data, dtype = fixed_strings(value)
    obj.create_dataset(key, data=data, dtype=dtype)


def set_attrs(obj, attrs: dict) -> None:
    """Write attributes, skipping ``None``; strings as UTF-8, sequences as arrays.

    A text longer than :data:`LONG_TEXT` (a sweep's config of many points) goes into a
    dataset ``text_<name>`` of the group, which the reader reads back as the attribute.
    """
    for name, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, str) and len(value) > LONG_TEXT // 4 \
                and len(value.encode("utf-8")) > LONG_TEXT:
            _set_long_text(obj, name, value)
            continue
        if isinstance(value, str) or (isinstance(value, (list, tuple)) and value
                                      and all(isinstance(v, str) for v in value)):
            data, dtype = fixed_strings(value)
            obj.attrs.create(name, data, dtype=dtype)
        elif isinstance(value, (bool, np.bool_)):
            obj.attrs[name] = np.int8(value)
        else:
            obj.attrs[name] = np.asarray(value)


def _clear_status_flags_bytes(head: bytes) -> bytes | None:
    """The superblock with its file-consistency flags cleared, or ``None`` if not needed."""
    version, offsets = head[8], head[9]
    if version < 2 or head[11] == 0:
        return None
    end = 12 + 4 * offsets
    if len(head) < end + 4:
        return None
    body = head[:11] + b"\x00" + head[12:end]
    return body + lookup3(body).to_bytes(4, "little")


def mark_closed_on_disk(path) -> None:
    """Clear the "open for writing" flags in the superblock on disk, under a live writer.

    A SWMR writer keeps the file consistent on disk at every flush; only these flags stop
    h5py, xarray or netCDF from opening it. Cleared after each flush, they are left set
    by a writer that is killed only if it dies within a flush. HDF5 keeps its own copy
    of the superblock, so the writer itself is not affected.
    """
    with contextlib.suppress(OSError), open(path, "rb+") as f:
        head = f.read(64)
        fixed = _clear_status_flags_bytes(head) if head[:8] == b"\x89HDF\r\n\x1a\n" else None
        if fixed is not None:
            f.seek(0)
            f.write(fixed)


def recover(path) -> bool:
    """Mark a file that a crashed writer left "open for writing" as closed (``h5clear -s``).

    A SWMR writer keeps the file consistent on disk at every flush, so after a crash
    only the flags in the superblock stop other programs from opening it. Returns
    ``True`` if the flags were set and are now cleared. Never call it on a file that a
    live process is still writing.
    """
    with open(path, "rb+") as f:
        head = f.read(64)
        if head[:8] != b"\x89HDF\r\n\x1a\n":
            raise SessionFileError(path, "not an HDF5 file (so not a DiffLab session)")
        fixed = _clear_status_flags_bytes(head)
        if fixed is None:
            return False
        f.seek(0)
        f.write(fixed)
        f.flush()
        os.fsync(f.fileno())
    return True


_M = 0xFFFFFFFF
_MIX = (4, 6, 8, 16, 19, 4)
_FINAL = (14, 11, 25, 16, 4, 14, 24)


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M


def _words(block: bytes) -> list[int]:
    return [int.from_bytes(block[j : j + 4], "little") for j in (0, 4, 8)]


def _mix(s: list[int]) -> None:
    for i, k in enumerate(_MIX):
        t, src, add = i % 3, (i + 2) % 3, (i + 1) % 3
        s[t] = ((s[t] - s[src]) & _M) ^ _rot(s[src], k)
        s[src] = (s[src] + s[add]) & _M


def _final(s: list[int]) -> None:
    for i, k in enumerate(_FINAL):
        t, src = (2 + i) % 3, (1 + i) % 3
        s[t] = ((s[t] ^ s[src]) - _rot(s[src], k)) & _M


def lookup3(data: bytes, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 ``hashlittle``: the checksum HDF5 puts on its metadata."""
    n = len(data)
    s = [(0xDEADBEEF + n + initval) & _M] * 3
    i = 0
    while n - i > 12:
        s = [(v + w) & _M for v, w in zip(s, _words(data[i : i + 12]))]
        _mix(s)
        i += 12
    if n == i:
        return s[2]
    tail = data[i:] + bytes(12 - (n - i))
    s = [(v + w) & _M for v, w in zip(s, _words(tail))]
    _final(s)
    return s[2]
