"""The shared results store: Monte-Carlo results on disk, keyed by what defines them.

A simulation here is a pure function of public parameters, so its result can be kept for
every session, every server process on the machine and every restart. Each entry is one file
named by the SHA-256 of (the function's qualified name, its bound parameters, the package
version and a digest of the code that computes it), so a changed engine never serves an old
number and deleting the directory only costs time.

Format (:mod:`dpcore._store_format`). One ``.npz`` file per entry, read with
``allow_pickle=False``: arrays (and DataFrame columns) are stored as numpy arrays, bit for bit,
and the structure around them (tuples, dicts, DataFrames, frozen dataclasses of this package,
plain numbers and strings) as a JSON manifest inside the same file. Nothing in a stored file is
ever executed, unlike a pickle.

The store loads only what it wrote. Each file starts with an HMAC-SHA-256 tag of its content
under a key kept in the store's directory (``.store-key``, created 0600 and used only while it
is owned by this user and private to them); the manifest names the stored function that
produced it, which must be the one asked for. A file without a valid tag (planted by someone
who can write the directory, or left by an older version) is ignored and removed, and its
result computed again. A dataclass is rebuilt only from a module of ``dpcore`` or ``ui`` that
this process has already imported: nothing is ever imported because a file names it.

Writes go to a temporary file in the same directory, then ``os.replace``: a reader sees the
old entry or the new one, never half of one. Each read touches the file's modification time,
and after a write the least recently used entries are evicted until the store is under its
size bound.

Settings (environment): ``DPCORE_STORE`` the directory (default ``~/.cache/dpcore/results``,
or under ``$XDG_CACHE_HOME``); ``DPCORE_STORE_MAX_MB`` the size bound (default 1024);
``DPCORE_STORE=off`` disables the store (every call computes).

Nothing computed from uploaded data may enter the store (privacy rule 4): only functions of
public parameters are decorated with :func:`stored`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
import importlib
import inspect
import json
import math
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

import numpy as np

from ._store_format import pack, producer, unpack

__all__ = ["ResultStore", "StoredFunction", "default_store", "stored"]

P = ParamSpec("P")
R = TypeVar("R")

_MISSING = object()
_SUFFIX = ".npz"
_KEY_FILE = ".store-key"
_TAG = 32  # bytes of the HMAC-SHA-256 tag that opens every file


def _default_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dpcore" / "results"


#: The command line and the server, which compute nothing themselves: the first part of a
#: path relative to the package root (a module or a subpackage) that the digest leaves out.
FRONT_ENDS = ("cli", "_serve", "__main__.py")


def _digested(root):
    """The source files under ``root`` whose text enters the package digest, sorted: every
    ``.py`` file but the front ends' (:data:`FRONT_ENDS`)."""
    return sorted(
        p for p in Path(root).rglob("*.py") if p.relative_to(root).parts[0] not in FRONT_ENDS
    )


def _source_digest(root):
    """A digest of the science core's source under ``root`` (paths and texts)."""
    h = hashlib.sha256()
    for path in _digested(root):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _package_digest():
    """A digest of the science core's source: an edited engine gets fresh keys (the command
    line and the server, which compute nothing themselves, are left out)."""
    return _source_digest(Path(__file__).resolve().parent)


@functools.lru_cache(maxsize=256)
def _module_digest(module):
    """A digest of the source file of the module that defines a stored function."""
    try:
        source = inspect.getsource(importlib.import_module(module))
    except (OSError, TypeError, ImportError):
        return ""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _plain(value):
    """A parameter as JSON-ready plain data (numbers exact, tuples as lists)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            return {"float": repr(v)}
        return int(v) if v.is_integer() else v  # 75 and 75.0 name the same setting
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (tuple, list, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "dataclass": type(value).__qualname__,
            **{f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    raise TypeError(f"a stored function's parameter must be plain data, got {type(value).__name__}")


class ResultStore:
    """A directory of results keyed by a hash of their definition, shared by processes.

    Parameters
    ----------
    root : path-like
        The directory (created on first write).
    max_bytes : int
        Size bound; after a write, least recently used entries go until the store fits.
    """

    def __init__(self, root, max_bytes=1024 * 2**20):
        self.root = Path(root)
        self.max_bytes = int(max_bytes)
        self._key = None

    def _secret(self, create):
        """The key that tags this store's files; None when it is missing (and not created) or
        not private to this user (then nothing is read, and nothing written)."""
        if self._key is not None:
            return self._key
        path = self.root / _KEY_FILE
        if not path.exists() and create:
            self.root.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                pass  # another process made it meanwhile
            else:
                with os.fdopen(fd, "wb") as f:
                    f.write(secrets.token_bytes(32))
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            key = f.read()
        private = sys.platform == "win32" or (
            info.st_uid == os.getuid() and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        )
        if not private or len(key) != 32 or not stat.S_ISREG(info.st_mode):
            return None
        self._key = key
        return key

    def key(self, name, params):
        """The SHA-256 naming the entry of ``name(**params)``."""
        from . import __version__

        module = name.rsplit(".", 1)[0]
        blob = json.dumps(
            {
                "name": name,
                "params": _plain(params),
                "version": __version__,
                "core": _package_digest(),
                "module": _module_digest(module),
            },
            sort_keys=True,
            allow_nan=False,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def _path(self, key):
        return self.root / key[:2] / (key + _SUFFIX)

    def has(self, name, params):
        """Whether ``name(**params)`` is stored (without reading it)."""
        return self._path(self.key(name, params)).exists()

    def get(self, name, params, default=None):
        """The stored result of ``name(**params)``, or ``default``."""
        path = self._path(self.key(name, params))
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return default
        except OSError:
            return default
        try:
            secret = self._secret(create=False)
            tag, body = blob[:_TAG], blob[_TAG:]
            if secret is None or not hmac.compare_digest(
                tag, hmac.new(secret, body, hashlib.sha256).digest()
            ):
                raise ValueError("not written by this store")
            value = unpack(body, name)
        except Exception:  # a damaged or foreign file: drop it, compute again
            path.unlink(missing_ok=True)
            return default
        try:
            os.utime(path)  # "recently used", for the eviction order
        except OSError:
            pass
        return value

    def put(self, name, params, value):
        """Store ``value`` as the result of ``name(**params)``, atomically; returns the path."""
        body = pack(name, value)
        secret = self._secret(create=True)
        if secret is None:
            raise PermissionError(
                f"the results store {str(self.root)!r} has a key file that is "
                f"not private to this user ({_KEY_FILE}): nothing is stored"
            )
        path = self._path(self.key(name, params))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(hmac.new(secret, body, hashlib.sha256).digest())
                f.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.evict()
        return path

    def fetch(self, name, params, compute):
        """The stored result, or ``compute()`` stored and returned."""
        value = self.get(name, params, _MISSING)
        if value is _MISSING:
            value = compute()
            try:
                self.put(name, params, value)
            except PermissionError:  # a store we cannot trust: compute, never store
                pass
        return value

    def entries(self):
        """(path, size, last use) of every entry, oldest use first."""
        out = []
        for path in self.root.glob(f"*/*{_SUFFIX}"):
            if path.name.startswith(".tmp-"):
                continue
            try:
                st = path.stat()
            except FileNotFoundError:  # evicted by another process meanwhile
                continue
            out.append((path, st.st_size, st.st_mtime))
        return sorted(out, key=lambda e: e[2])

    def count(self, name):
        """How many stored entries ``name`` wrote (each entry's manifest names its producer)."""
        n = 0
        for path, _, _ in self.entries():
            try:
                n += producer(path.read_bytes()[_TAG:]) == name
            except Exception:  # evicted meanwhile, or not an entry (get() drops such files)
                continue
        return n

    def size(self):
        """Total bytes of the stored entries."""
        return sum(s for _, s, _ in self.entries())

    def evict(self):
        """Delete least recently used entries until the store is within ``max_bytes``."""
        entries = self.entries()
        total = sum(s for _, s, _ in entries)
        for path, size, _ in entries:
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size


def default_store():
    """The store the environment names (``DPCORE_STORE``), or None when it is "off"."""
    root = os.environ.get("DPCORE_STORE", "")
    if root.lower() in ("off", "0", "none"):
        return None
    max_mb = float(os.environ.get("DPCORE_STORE_MAX_MB", "1024"))
    return ResultStore(root or _default_root(), int(max_mb * 2**20))


class StoredFunction(Protocol, Generic[P, R]):
    """A function decorated with :func:`stored`: called as before, its result read from the
    store or computed and stored, with the store's view of each call beside it."""

    #: The function's qualified name, the first part of every key of its results.
    store_name: str
    #: The computation alone: it neither reads nor writes the store.
    compute: Callable[P, R]

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    def is_stored(self, *args: P.args, **kwargs: P.kwargs) -> bool:
        """Whether this call's result is in the store (so it costs only a read)."""
        ...

    def save(self, value: R, *args: P.args, **kwargs: P.kwargs) -> bool:
        """Store ``value`` as this call's result; returns whether it was stored."""
        ...


def stored(fn: Callable[P, R]) -> StoredFunction[P, R]:
    """Decorate a function of public parameters: its result is read from the shared store
    before anything is computed, and stored after.

    The key holds the function's qualified name and every bound argument (defaults
    included), so ``f(1)`` and ``f(n=1)`` share an entry. Never decorate a function that
    sees uploaded data.
    """
    signature = inspect.signature(fn)
    name = f"{fn.__module__}.{fn.__qualname__}"

    def params(args, kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        store = default_store()
        if store is None:
            return fn(*args, **kwargs)
        return store.fetch(name, params(args, kwargs), lambda: fn(*args, **kwargs))

    def is_stored(*args, **kwargs):
        """Whether this call's result is in the store (so it costs only a read)."""
        store = default_store()
        return store is not None and store.has(name, params(args, kwargs))

    def save(value, *args, **kwargs):
        """Store ``value`` as this call's result (computed elsewhere, for example in a
        worker process by :attr:`compute`, the undecorated function); returns whether it was
        stored."""
        store = default_store()
        if store is None:
            return False
        try:
            store.put(name, params(args, kwargs), value)
        except PermissionError:  # a store we cannot trust: never store
            return False
        return True

    stored_fn: Any = wrapper  # the attributes below are this decorator's, set on the function
    stored_fn.store_name = name
    stored_fn.compute = fn  # the computation alone: it neither reads nor writes the store
    # functools.update_wrapper (st.cache_data) keeps these attributes
    stored_fn.is_stored, stored_fn.save = is_stored, save
    return cast("StoredFunction[P, R]", stored_fn)
