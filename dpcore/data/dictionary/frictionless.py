"""A data dictionary given as a Frictionless Table Schema, read into the JSON form.

``fields`` with ``name``, ``type``, ``constraints`` (``enum``: levels; ``minimum``,
``maximum``: bounds); a boolean's ``falseValues``/``trueValues`` are a binary column's levels;
a column's role from its ``role``, the ``primaryKey`` (an identifier) or the top level.
"""

from __future__ import annotations

from typing import Any

from .entries import EntryReader

__all__ = ["frictionless_form"]


def frictionless_form(reader: EntryReader, data: dict[str, Any]) -> dict[str, Any]:
    """A Frictionless Table Schema as the JSON form (roles from ``role`` or the top level);
    each bad field is a problem collected by ``reader``."""
    fields = data.get("fields")
    if not isinstance(fields, list):
        reader.add(
            "dictionary",
            "fields",
            "'fields' must be a list",
            'write \'fields\': [{"name": ..., "type": ...}, ...]',
        )
        fields = []
    keys = data.get("primaryKey") or []
    keys = [keys] if isinstance(keys, str) else list(keys)
    columns = []
    for i, f in enumerate(fields):
        if not isinstance(f, dict):
            reader.add(
                f"fields[{i}]",
                "",
                "each field is an object",
                'write {"name": ..., "type": ...}',
            )
            continue
        cons = f.get("constraints") or {}
        ftype = str(f.get("type") or "any").lower()
        entry: dict[str, Any] = {
            "name": f.get("name"),
            "unit": f.get("unit", ""),
            "meaning": f.get("description") or f.get("title") or "",
        }
        if f.get("role"):
            entry["role"] = f["role"]
        elif f.get("name") in keys:
            entry["role"] = "identifier"
        enum = cons.get("enum")
        if ftype == "boolean":
            entry["type"] = "binary"
            levels = _boolean_levels(reader, f, f"fields[{i}]")
            if levels is not None:
                entry["levels"] = levels
        elif enum:
            entry["type"] = (
                "categorical" if entry.get("role", "covariate") == "covariate" else "label"
            )
            entry["levels"] = enum
        elif ftype in ("number", "integer"):
            entry["type"] = "numeric"
        elif ftype in ("string", "any"):
            entry["type"] = "label"
            entry["_role_default"] = "ignore"  # unless the top level names it
        else:
            entry["type"] = ftype  # reported as an unknown type
        if "minimum" in cons or "maximum" in cons:
            entry["lower"], entry["upper"] = cons.get("minimum"), cons.get("maximum")
        if f.get("levels"):
            entry["levels"] = f["levels"]
        columns.append(entry)
    out = {k: v for k, v in data.items() if k not in ("fields", "primaryKey")}
    out["columns"] = columns
    if isinstance(data.get("missing_values"), list):
        # Frictionless lists every missing marker; "" is always one here
        out["missing_values"] = [v for v in data["missing_values"] if v != ""]
    return out


def _boolean_levels(reader: EntryReader, field: dict[str, Any], where: str) -> list[str] | None:
    """A Table Schema boolean's ``falseValues`` and ``trueValues`` as a binary column's
    two levels (false first), or None when it gives neither (the usual words read)."""
    false, true = field.get("falseValues"), field.get("trueValues")
    if false is None and true is None:
        return None
    given = [v if isinstance(v, list) else [v] for v in (false or [], true or [])]
    if any(len(v) != 1 for v in given):
        reader.add(
            where,
            "trueValues",
            "a binary column has two levels: one value read as false, one as true "
            f"(got falseValues {false!r}, trueValues {true!r})",
            'write "falseValues": ["N"], "trueValues": ["Y"] as the file writes them',
        )
        return None
    return [str(given[0][0]), str(given[1][0])]
