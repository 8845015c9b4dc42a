"""How the results store writes a result: its arrays in an ``.npz`` file, bit for bit, and the
structure around them as a JSON manifest inside the same file; nothing in it is ever executed.

The structure is tuples, lists, dicts with text keys, DataFrames (columns, categorical ones as
codes and categories, and their index), Series, frozen dataclasses of this package, plain
numbers and strings. A dataclass is rebuilt only from a module of :data:`ALLOWED` that this
process has already imported: nothing is imported because a file names it. The manifest names
the stored function that produced the value, which must be the one asked for.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import sys
from typing import Any

import numpy as np

__all__ = ["ALLOWED", "pack", "producer", "unpack"]

ALLOWED = ("dpcore", "dpcore_app")  # packages whose dataclasses may be rebuilt from a file


def pack(name: str, value: Any) -> bytes:
    """The ``.npz`` bytes of ``value``, the result of the stored function ``name``.

    Raises
    ------
    TypeError
        ``value`` holds something the format cannot store (an object column that is not
        text, a dict with other keys, a dataclass from elsewhere, an arbitrary object).
    """
    enc = _Encoder()
    manifest = json.dumps({"producer": name, "value": enc.encode(value)}, allow_nan=False).encode()
    buf = io.BytesIO()
    np.savez(buf, __manifest__=np.frombuffer(manifest, dtype=np.uint8), **enc.arrays)
    return buf.getvalue()


def unpack(body: bytes, name: str) -> Any:
    """The value :func:`pack` wrote into ``body`` for the stored function ``name``.

    Raises
    ------
    ValueError
        ``body`` was written for another function, or names a class it may not rebuild (and
        any error of a damaged file).
    """
    with np.load(io.BytesIO(body), allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    manifest = json.loads(arrays.pop("__manifest__").tobytes().decode())
    if manifest.get("producer") != name:
        raise ValueError("written for another function")
    return _decode(manifest["value"], arrays)


def producer(body: bytes) -> str:
    """The stored function that wrote ``body`` (its manifest's producer), reading no array."""
    with np.load(io.BytesIO(body), allow_pickle=False) as data:
        return str(json.loads(data["__manifest__"].tobytes())["producer"])


class _Encoder:
    """Splits a result into numpy arrays and a JSON manifest that says how to rebuild it."""

    def __init__(self):
        self.arrays = {}

    def _array(self, a):
        name = f"a{len(self.arrays)}"
        a = np.asarray(a)
        if a.dtype == object:
            if not all(isinstance(v, str) for v in a.ravel()):
                raise TypeError("only text columns may have dtype object")
            self.arrays[name] = a.astype(str)
            return {"array": name, "object": True}
        self.arrays[name] = a
        return {"array": name}

    def _column(self, column):
        import pandas as pd

        if isinstance(column.dtype, pd.CategoricalDtype):  # labels: codes and their categories
            categories = column.cat.categories
            return {
                "codes": self._array(column.cat.codes.to_numpy()),
                "categories": self._array(categories.to_numpy(dtype=object)),
                "text": categories.dtype != object,
            }
        return self._array(column.to_numpy())

    def encode(self, value):
        import pandas as pd

        if isinstance(value, pd.DataFrame):
            index = (
                None
                if isinstance(value.index, pd.RangeIndex)
                and value.index.start == 0
                and value.index.step == 1
                else self._array(value.index.to_numpy())
            )
            return {
                "frame": [[str(c), self._column(value[c])] for c in value.columns],
                "index": index,
                "index_name": value.index.name,
                "rows": len(value),
            }
        if isinstance(value, pd.Series):
            return {"series": self._array(value.to_numpy()), "name": value.name}
        if isinstance(value, np.ndarray):
            return self._array(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            if cls.__module__.split(".")[0] not in ALLOWED:
                raise TypeError(
                    f"only dataclasses of {' or '.join(ALLOWED)} can be stored, "
                    f"got {cls.__module__}.{cls.__qualname__}"
                )
            return {
                "dataclass": f"{cls.__module__}:{cls.__qualname__}",
                "fields": {
                    f.name: self.encode(getattr(value, f.name)) for f in dataclasses.fields(value)
                },
            }
        if isinstance(value, tuple):
            return {"tuple": [self.encode(v) for v in value]}
        if isinstance(value, list):
            return {"list": [self.encode(v) for v in value]}
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise TypeError("only dicts with text keys can be stored")
            return {"dict": {k: self.encode(v) for k, v in value.items()}}
        if isinstance(value, (np.generic,)):
            return self._array(np.asarray(value)) | {"scalar": True}
        if isinstance(value, float) and not math.isfinite(value):
            return {"float": repr(value)}
        if value is None or isinstance(value, (bool, int, float, str)):
            return {"value": value}
        raise TypeError(f"cannot store a {type(value).__name__}")


def _decode(node, arrays):
    """The value a manifest node describes, its arrays taken from ``arrays``."""
    import pandas as pd

    if "array" in node:
        a = arrays[node["array"]]
        if node.get("object"):
            a = a.astype(object)
        return a[()] if node.get("scalar") else a
    if "codes" in node:
        return pd.Categorical.from_codes(
            _decode(node["codes"], arrays),
            pd.Index(_decode(node["categories"], arrays), dtype="str" if node["text"] else object),
        )
    if "frame" in node:
        cols = {name: _decode(col, arrays) for name, col in node["frame"]}
        index = (
            None
            if node["index"] is None
            else pd.Index(_decode(node["index"], arrays), name=node["index_name"])
        )
        frame = pd.DataFrame(cols, index=index)
        if not cols:
            frame = pd.DataFrame(index=index if index is not None else pd.RangeIndex(node["rows"]))
        return frame
    if "series" in node:
        return pd.Series(_decode(node["series"], arrays), name=node["name"])
    if "dataclass" in node:
        module, qualname = node["dataclass"].split(":")
        if module.split(".")[0] not in ALLOWED or module not in sys.modules:
            raise ValueError(f"refusing to rebuild a class from {module!r}")
        cls = sys.modules[module]  # already imported by this process: never import by name
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise ValueError(f"{qualname} is not a dataclass")
        return cls(**{k: _decode(v, arrays) for k, v in node["fields"].items()})
    if "tuple" in node:
        return tuple(_decode(v, arrays) for v in node["tuple"])
    if "list" in node:
        return [_decode(v, arrays) for v in node["list"]]
    if "dict" in node:
        return {k: _decode(v, arrays) for k, v in node["dict"].items()}
    if "float" in node:
        return float(node["float"])
    return node["value"]
