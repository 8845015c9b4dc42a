"""The "Your data" page's data-dependent widgets: column mapping and public bounds.

Their options are the file's own column names and labels, which are data: they are kept out of
the URL (a shared link must carry nothing from the data), so these widgets are not bound to
query parameters. Their keys carry the file's digest, so a new file starts from fresh guesses.
Column names and labels are shown as plain text: escaped by ``plain`` where a widget renders
markdown (radio options, labels), as they are where it does not (selectbox and multiselect
options, table cells), never as markup. The public metadata (bounds, levels, units) is one
``st.data_editor`` table whose entries are kept in ``st.session_state`` by column name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

import streamlit as st

from dpcore.data import read_dictionary
from dpcore.data.labels import default_treated
from dpcore_app.ui.common.controls import Choice
from dpcore_app.ui.common.link import state_key, write_link
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import compute, explain, meta
from dpcore_app.ui.upload.roles import dictionary_arms, dictionary_roles

if TYPE_CHECKING:
    from dpcore.data.csv_io import CsvPreview
    from dpcore.data.dictionary import Dictionary
    from dpcore_app.ui.common.demos import Source
    from dpcore_app.ui.upload.meta import Meta

T = TypeVar("T")

UPLOADED = "your_data_uploaded"
#: The design widget's randomization ratios, by P(treated).
RATIO_OF = {0.5: "1:1", 2 / 3: "2:1", 1 / 3: "1:2", 0.75: "3:1", 0.25: "1:3"}


@dataclass(frozen=True)
class Unchosen(Choice):
    """A segmented choice with no default: ``widget()`` is None until the analyst (or a
    dictionary that names it) picks one, so nothing is assumed. Bound to the URL like the
    others: a link that names it sets it, a link without it leaves it to choose."""

    kind: str = "segmented"

    def widget(self, **kwargs: Any) -> Any:
        """Create the widget and return the chosen option, or None until one is chosen."""
        return st.segmented_control(
            self.label,
            self.options,
            default=None,
            format_func=self.fmt,
            key=self.state_key,
            on_change=write_link,
            help=self.help,
            **kwargs,
        )


def _forget_upload():
    st.session_state.pop(UPLOADED, None)


def uploaded_source() -> Source | None:
    """The uploaded file as a Source, or None; kept while the analyst looks at a demo.

    The Source (bytes and digest, computed once per file) is kept in this session's state, so
    switching to a demo and back finds the file, its mapping and its table again.
    """
    up = st.file_uploader(
        f"Trial CSV (comma, semicolon or tab; at most {compute.max_upload_mb()} MB)",
        type=["csv", "tsv", "txt"],
        key="upload",
        on_change=_forget_upload,
    )
    st.caption(explain.upload_caption(st.get_option("server.disconnectedSessionTTL")))
    kept = st.session_state.get(UPLOADED)
    if up is not None:
        if kept is None or kept[0] != up.file_id:
            kept = (up.file_id, compute.upload_source(up.name, up.getvalue()))
            st.session_state[UPLOADED] = kept
        return kept[1]
    if kept is None:
        return None
    st.caption(
        plain(
            f"Using {kept[1].name}, uploaded earlier in this session; upload another "
            "file to replace it."
        )
    )
    st.button("Forget this file", on_click=_forget_upload, key="forget_upload")
    return kept[1]


def with_dictionary(source: Source, dictionary: Dictionary) -> Source:
    """The uploaded file with an uploaded public data dictionary (a Dictionary) attached: the
    mapping's defaults and the "fill in" button then come from it, as for a demo file."""
    return replace(
        source,
        dictionary=dictionary.to_dict(),
        dictionary_problems=tuple(
            (
                p.where,
                f"the dictionary's {p.field or 'entry'} was left out: {p.message}"
                + (f" (fix: {p.fix})" if p.fix else ""),
            )
            for p in dictionary.problems
        ),
    )


def units(source: Source) -> dict[str, str]:
    """The units typed in (or filled into) the metadata table, by column."""
    return {name: row.get("unit", "") for name, row in _rows(source).items()}


def keep(widget_key: str, options: Collection[object], many: bool = False) -> bool:
    """Restore a widget's value kept from a run where it was drawn; True when restored.

    Streamlit drops a widget's state in a run that does not draw it (the analyst looking at
    a demo), so the page keeps a copy under another key; a copy no longer among the options
    is not restored.
    """
    if widget_key in st.session_state or f"_kept_{widget_key}" not in st.session_state:
        return False
    value = st.session_state[f"_kept_{widget_key}"]
    if not (set(value) <= set(options) if many else value in options):
        return False
    st.session_state[widget_key] = value
    return True


def kept(widget_key: str, value: T) -> T:
    """Keep a widget's value for :func:`keep` (returns the value)."""
    st.session_state[f"_kept_{widget_key}"] = value
    return value


def key(source: Source, name: str) -> str:
    """A widget's or an entry's session-state key for this file (its digest's first 12 digits)."""
    return f"{name}_{source.digest[:12]}"


def role_key(source: Source, name: str) -> str:
    """A mapping widget's key: the file's, and its dictionary's when it has one, so a dictionary
    that arrives after the file (or another dictionary) starts the roles afresh from it."""
    if source.dictionary is None:
        return key(source, name)
    text = json.dumps(source.dictionary, sort_keys=True, ensure_ascii=False, default=str)
    return f"{key(source, name)}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _select(label, options, k, default):
    """A selectbox over ``options`` starting at ``default`` (nothing chosen when it is None)."""
    index = options.index(default) if default in options else None
    return kept(k, st.selectbox(label, options, key=k, index=None if keep(k, options) else index))


def mapping(source: Source, preview: CsvPreview) -> dict[str, Any] | None:
    """Treatment, treated label, outcome and covariates: the dictionary's roles, or the analyst's.

    With a public dictionary every role starts as it says, and a column it gives another role
    (``ignore``, ``identifier``, the outcome) is never offered as a covariate; a role the
    analyst changes is named in ``overrides``, which the release carries. Without one (or
    where it names none), the treatment column is guessed from its name only, and the outcome
    and the covariates are the analyst's to choose: nothing is pre-selected.
    """
    cols = list(preview.columns)
    roles = dictionary_roles(source.dictionary, cols)
    guess = compute.guesses(cols, preview.rows)
    a, b = st.columns(2)
    with a:
        treatment = _select(
            "Treatment column",
            cols,
            role_key(source, "treat"),
            roles.treatment if roles and roles.treatment else guess["treatment"],
        )
    with b:
        rest = [c for c in cols if c != treatment]
        outcome = _select(
            "Outcome column", rest, role_key(source, "outcome"), roles.outcome if roles else None
        )
    if treatment is None or outcome is None:
        return None
    # the dictionary's two arms and its treated one, when it describes this column; the
    # data's labels only without one
    from_dictionary = dictionary_arms(source.dictionary, treatment)
    if from_dictionary is not None:
        labels, guessed = list(from_dictionary[0]), from_dictionary[1]
    else:
        labels = list(compute.arm_labels(source.digest, source.data, treatment))
        guessed = default_treated(labels) if len(labels) == 2 else None
    treated = None
    if len(labels) == 2:
        k = role_key(source, "treated")
        treated = kept(
            k,
            st.radio(
                "Treated arm (the rule's “treat” recommendation)",
                labels,
                horizontal=True,
                index=None
                if keep(k, labels)
                else (labels.index(guessed) if guessed in labels else 0),
                format_func=plain,
                key=k,
            ),
        )
    excluded = roles.excluded if roles else frozenset()
    options = [c for c in cols if c not in (treatment, outcome) and c not in excluded]
    default = [c for c in roles.covariates if c in options] if roles else []
    k = role_key(source, "covs")
    covariates = kept(
        k,
        st.multiselect(
            "Covariates the rule may use",
            options,
            key=k,
            default=None if keep(k, options, many=True) else default,
        ),
    )
    if roles and excluded - {treatment, outcome}:
        st.caption(
            plain(
                f"{len(excluded - {treatment, outcome})} column(s) the dictionary marks "
                "ignore, identifier, outcome or propensity are not offered as covariates."
            )
        )
    elif not roles and not covariates:
        st.caption(
            "Without a data dictionary none is pre-selected: pick the covariates the rule may "
            "use (measured before randomization), or upload the trial's dictionary."
        )
    overrides = roles.overrides(treatment, outcome, treated, covariates) if roles else ()
    if overrides:
        st.warning(
            plain("Roles that differ from the data dictionary: " + "; ".join(overrides) + ". ")
            + "The release names them, in its files too.",
            icon=":material/edit_note:",
        )
    categorical = roles.categorical if roles else guess["categorical"]
    return dict(
        treatment=treatment,
        outcome=outcome,
        treated=treated,
        covariates=tuple(covariates),
        guessed_categorical=tuple(categorical),
        arms=tuple(labels) if from_dictionary is not None else None,
        overrides=overrides,
    )


def propensity_column(source: Source, columns: Iterable[str], used: Collection[str]) -> str | None:
    """The per-row propensity column, among the columns without a role (None when none is left)."""
    options = [c for c in columns if c not in used]
    if not options:
        return None
    return st.selectbox("Propensity column, P(treated) per row", options, key=key(source, "prop"))


def trial_args(
    source: Source,
    m: Mapping[str, Any],
    propensity: str | None,
    table: Meta,
    public_n: bool = True,
) -> tuple[Any, ...]:
    """load_trial's arguments: the mapping and the table's public levels."""
    return (
        source.digest,
        source.data,
        m["treatment"],
        m["outcome"],
        m["covariates"],
        tuple(table.categorical.items()),
        propensity,
        m["treated"],
        public_n,
        m.get("arms"),
        tuple(table.binary),
        outcome_levels(source, m["outcome"]),
        fills(source, m["covariates"]),
    )


def fills(source: Source, covariates: Collection[str]) -> tuple[tuple[str, Any], ...]:
    """The dictionary's public fill-in values of these covariates, as (column, value) pairs."""
    if source.dictionary is None:
        return ()
    d = read_dictionary(source.dictionary, strict=False)
    return tuple((c.name, c.fill) for c in d.columns if c.fill is not None and c.name in covariates)


def outcome_levels(source: Source, outcome: str) -> tuple[str, ...] | None:
    """The outcome's two public labels when the dictionary declares it binary with its levels
    ("0_no", "1_yes": the first reads 0), else None."""
    if source.dictionary is None:
        return None
    d = read_dictionary(source.dictionary, strict=False)
    column = next((c for c in d.columns if c.name == outcome), None)
    if column is None or column.type != "binary" or not column.levels:
        return None
    return tuple(column.levels)


def d0_source(source: Source, m: Mapping[str, Any], table: Meta) -> SimpleNamespace | None:
    """The public proxy D0 for Algorithm 2: a file with the trial's columns; None until read.

    Read with the trial's public levels (so its columns match) and refused when it is the
    trial or shares a row with it.
    """
    up = st.file_uploader(
        "Public proxy D0: a CSV with the same columns (e.g. an earlier, "
        "published trial). Its rows spend no privacy.",
        type=["csv", "tsv", "txt"],
        key="upload_d0",
    )
    if up is None:
        st.info(
            "Upload D0 to tune γ on it, or take γ from the paper's table.",
            icon=":material/upload_file:",
        )
        return None
    d0 = compute.upload_source(up.name, up.getvalue())
    compute.check_d0(source, d0, [m["treatment"], m["outcome"], *m["covariates"]])
    return SimpleNamespace(
        digest=d0.digest, trial=compute.load_trial(*trial_args(d0, m, None, table, public_n=False))
    )


# --------------------------------------------------------------------------------------------
# Public metadata: bounds, levels and units in one table


def _rows(source):
    return st.session_state.setdefault(key(source, "meta_rows"), {})


def _refresh(source, rows):
    """Replace the table's entries (with their origins) and start a fresh editor over them."""
    st.session_state[key(source, "meta_rows")] = rows
    st.session_state[key(source, "meta_version")] = (
        st.session_state.get(key(source, "meta_version"), 0) + 1
    )


def direction_label(value: str | None) -> str:
    """The outcome direction control's labels; None (not chosen) is shown as such in a notice."""
    return value if value in ("larger", "smaller") else "none: choose one"


def fill_from_dictionary(source: Source, names: Iterable[str]) -> None:
    """Button callback: the dictionary's public bounds, levels, outcome direction, design.

    A dictionary without ``larger_is_better`` (or with it misspelled, which its check lists)
    leaves the direction control as it is: unchosen until the analyst picks one."""
    d = source.dictionary
    assert d is not None  # the button is drawn for a file with a dictionary only
    if d.get("larger_is_better") is not None:
        st.session_state[state_key("better")] = "larger" if d["larger_is_better"] else "smaller"
    ratio = d.get("randomization")
    if ratio not in RATIO_OF.values():
        ratio = next(
            (r for p, r in RATIO_OF.items() if abs(p - (d.get("propensity") or -1)) < 1e-9), None
        )
    if ratio is not None:
        st.session_state["design"] = ratio
    _refresh(source, {**_rows(source), **meta.from_dictionary(d, names)})


def fill_once_from_dictionary(source: Source, m: Mapping[str, Any]) -> None:
    """When a dictionary arrives (each dictionary once per file), everything it says is filled
    in at once, as the "fill in" button does: the outcome's direction, the randomization and
    the table's bounds, levels and units, so no release can use a design (a 1:1 ratio, say)
    that the dictionary contradicts. Called before the design controls are drawn."""
    if source.dictionary is None:
        return
    flag = role_key(source, "dictionary_filled")
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    fill_from_dictionary(source, [*m["covariates"], m["outcome"]])


def fill_from_data(
    source: Source, numeric: Iterable[str], categorical: Iterable[str], outcome: str
) -> None:
    """Button callback: the data's own ranges and levels (voids the guarantee; the page says so)."""
    ranges, levels = compute.data_metadata(
        source.digest, source.data, tuple(numeric), tuple(categorical), outcome
    )
    _refresh(source, meta.from_data(_rows(source), ranges, levels))


def clear_table(source: Source) -> None:
    """Button callback: empty the metadata table (a fresh editor over no entries)."""
    _refresh(source, {})


def metadata(source: Source, m: Mapping[str, Any]) -> tuple[Meta, bool]:
    """The public metadata table: returns (upload_meta.Meta, read_from_data).

    Whether the release is private is decided by the entries in the table, each with its
    origin, not by the last button pressed.
    """
    names = list(m["covariates"])
    rows = _rows(source)
    version = st.session_state.get(key(source, "meta_version"), 0)
    # The editor keeps edits by row position: a different set of rows gets a fresh editor
    # (the entries are kept by column name in the session state).
    sig = hashlib.sha256("\0".join([*names, m["outcome"]]).encode()).hexdigest()[:12]
    editor = f"{key(source, 'meta')}_{version}_{sig}"
    # Each row's "problem" cell says what it still lacks, counting the edit this run follows
    # (the editor's pending state), and the dictionary's invalid entries for that column.
    base = meta.table(names, m["outcome"], rows, m["guessed_categorical"])
    pending = meta.rows_of(meta.with_edits(base, st.session_state.get(editor)), rows)
    frame = meta.table(
        names,
        m["outcome"],
        {**rows, **pending},
        m["guessed_categorical"],
        meta.dictionary_problems_by_column(source.dictionary_problems),
    )
    edited = st.data_editor(
        frame,
        key=editor,
        hide_index=True,
        num_rows="fixed",
        disabled=["column", "from", "problem"],
        width="stretch",
        column_config={
            "column": st.column_config.TextColumn("column"),
            "type": st.column_config.SelectboxColumn(
                "type", options=list(meta.TYPES), required=True
            ),
            "lower": st.column_config.NumberColumn("lower", format="%g"),
            "upper": st.column_config.NumberColumn("upper", format="%g"),
            "levels": st.column_config.TextColumn(
                "levels",
                help="Categorical columns: the public levels, comma-separated (or "
                "separated by | when a level holds a comma), baseline first. A "
                "value outside them counts as the baseline.",
            ),
            "unit": st.column_config.TextColumn("unit"),
            "from": st.column_config.TextColumn(
                "from",
                help="Where each entry came from: typed, the data dictionary, or the "
                "data (which voids the guarantee). Typing over an entry makes it typed.",
            ),
            "problem": st.column_config.TextColumn(
                "problem",
                help="What this row still needs before a release, and the "
                "dictionary's entries for it that were left out (with their fix).",
            ),
        },
    )
    now = meta.rows_of(edited, rows)
    st.session_state[key(source, "meta_rows")] = {**rows, **now}
    got = meta.read(edited, m["outcome"], now)
    a, b, c = st.columns(3)
    if source.dictionary is not None:
        a.button(
            "Fill in from the data dictionary",
            on_click=fill_from_dictionary,
            args=(source, [*names, m["outcome"]]),
            key="fill_dictionary",
            type="primary",
            help="The dictionary gives bounds, levels, the outcome's direction and the "
            "randomization from the trial's design, not from its data.",
        )
    types = dict(zip(edited["column"], edited["type"]))
    numeric = [n for n in names if types.get(n) != "categorical"]
    b.button(
        "Use the data's ranges and levels",
        on_click=fill_from_data,
        key="fill_data",
        args=(source, numeric, [n for n in names if n not in numeric], m["outcome"]),
        help="Reads bounds and levels off the data: the guarantee is then void.",
    )
    c.button("Clear the table", on_click=clear_table, args=(source,), key="clear_bounds")
    if got.from_data:
        read_off = ", ".join(f"'{plain(c)}'" for c in got.from_data)
        st.warning(
            f"The bounds or levels of {read_off} were read from "
            "the data. That voids the privacy guarantee: the release will be titled NOT "
            "PRIVATE. Type over them bounds and levels known before seeing the data (a "
            "measuring range, an inclusion criterion, the sites of the protocol) to keep "
            "it.",
            icon=":material/gpp_bad:",
        )
    st.caption(
        "One-hot columns need no bounds: they are 0 or 1. A 0/1 column is one click: "
        "type binary (its yes/no, y/n or true/false cells read as 1/0; or type its two "
        "levels, the one read as 0 first). A missing value makes a row count with weight 0; "
        "n stays the file's row count."
    )
    return got, bool(got.from_data)
