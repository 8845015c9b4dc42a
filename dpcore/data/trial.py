"""Read a randomized trial from a CSV file into arrays for DP-OWL (docs/spec/dp_owl.md §5).

The reader turns a user's CSV (any common delimiter and encoding) into a :class:`Trial`:
covariates ``X``, treatment ``A`` in {-1, +1} (+1 = treated), outcomes ``B`` and, when the file
has one, a per-row propensity P(A = +1 | X). Everything a user can get wrong in a file ends in a
:class:`TrialDataError` whose message says what to change.

Nothing here reads a bound off the data: feature bounds, outcome bounds and the weight bound
stay public inputs (docs/architecture.md, privacy rule 2). The returned trial carries no summary of
the data beyond the arrays themselves and the number of rows dropped for missing values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._validation import check_choice
from .columns import (
    MISSING_SUFFIX,
    binary_labels,
    encode_arms,
    encode_covariates,
    encode_treatment,
    fill_covariates,
    read_numbers,
)
from .csv_io import Source, read_cells
from .dictionary.read import read_dictionary
from .errors import TrialDataError, name_list, quote
from .labels import label_key, label_keys
from .roles import (
    check_categorical,
    check_names,
    check_roles,
    default_covariates,
    trial_arguments,
)

__all__ = [
    "MIN_ROWS_PER_ARM",
    "Trial",
    "read_arms_trial",
    "read_trial",
]

#: Fewest rows each arm needs after rows with missing values are dropped.
MIN_ROWS_PER_ARM = 10
#: How an incomplete row (a used column missing) is treated, and a value outside the public
#: levels of a categorical column.
INCOMPLETE = ("drop", "keep")
UNKNOWN_LEVELS = ("error", "baseline")


@dataclass(frozen=True, eq=False)
class Trial:
    """A two-arm randomized trial read from a CSV file, ready for :class:`dpcore.DPOWL`.

    Attributes
    ----------
    X : ndarray (n, p)
        Covariates as floats, one-hot columns included (read-only).
    A : ndarray (n,)
        Treatment, +1 for the treated arm and -1 for the other (read-only).
    B : ndarray (n,)
        Outcomes as read, not clipped or shifted; the public outcome bounds are applied by
        :class:`dpcore.DPOWL` (read-only).
    propensity : ndarray (n,) or None
        P(A = +1 | X) per row when a propensity column was named; None otherwise (pass the
        known randomization probability to ``DPOWL.fit`` instead).
    covariates : tuple of str
        Names of the columns of ``X``; a categorical column ``site`` with levels A, B, C
        becomes ``site=B`` and ``site=C`` (A is the baseline).
    treatment, outcome : str
        The column names used.
    treated : label
        The label read as +1, as it appears in the file (e.g. ``1`` or ``"drug"``).
    arms : tuple
        The two labels, treated first: ``(treated, control)``.
    n_dropped : int
        Rows dropped because a used column was missing in them.
    rows : ndarray (n,)
        The 1-based data row (header not counted) of each row of ``X``, to join results back
        to the file.
    complete : ndarray (n,) of bool or None
        With ``incomplete="keep"``: which rows have every used column. An incomplete row's
        missing cells hold a fixed fill value (0, the treated arm, propensity 0.5) and must get
        OWL weight 0 (:meth:`outcomes_for_fit`). None when incomplete rows were dropped.
    covariates_complete : ndarray (n,) of bool or None
        With ``incomplete="keep"``: which rows have every covariate, so that the rule can
        score them (a row missing only its outcome still gets a recommendation).
    propensity_column : str or None
    design_propensity : float or None
        The dictionary's randomization probability P(A = +1) (for two of K arms,
        p_treated / (p_treated + p_control)); :meth:`dpcore.DPOWL.fit_trial` uses it when the
        file has no propensity column. None without a dictionary that gives it.
    larger_is_better : bool or None
        The dictionary's outcome direction (:meth:`dpcore.DPOWL.fit_trial` uses it when the
        estimator is not given one). None without a dictionary that names it.
    other_arms : tuple
        Two arms of a K-arm trial: the dictionary's other arms. Their rows are missing values
        (with ``incomplete="keep"``: kept at weight 0, marked in ``complete``).
    n_other_arms : int
        Rows in one of ``other_arms`` (data: analyst-only, never published).
    arm_probabilities : tuple of float or None
        From :func:`read_arms_trial` (a trial over all its K arms): each arm's randomization
        probability, aligned with ``arms``; ``A`` then holds each row's arm index 0..K-1
        (an incomplete row's is 0, at weight 0) and ``treated`` is None.
    categories : dict
        For each one-hot encoded column, its levels with the baseline first.
    fills : dict
        The covariates' public fill-in values ``{column: value}``: a missing cell of one holds
        its fill, and the column ``"<column> is missing"`` after it in ``X`` is 1 there.
    delimiter, encoding, decimal : str
        How the file was read, for showing back to the user.
    """

    X: np.ndarray
    A: np.ndarray
    B: np.ndarray
    propensity: np.ndarray | None
    covariates: tuple
    treatment: str
    outcome: str
    treated: object
    arms: tuple
    n_dropped: int
    propensity_column: str | None = None
    categories: dict = field(default_factory=dict)
    delimiter: str = ","
    encoding: str = "utf-8"
    decimal: str = "."
    rows: np.ndarray | None = None
    complete: np.ndarray | None = None
    covariates_complete: np.ndarray | None = None
    design_propensity: float | None = None
    other_arms: tuple = ()
    n_other_arms: int = 0
    arm_probabilities: tuple | None = None
    larger_is_better: bool | None = None
    fills: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of rows used: with ``incomplete="keep"``, the file's row count (public)."""
        return self.X.shape[0]

    @property
    def n_incomplete(self) -> int:
        """Rows kept with a missing value or in another arm (data: analyst-only, never
        published): every row ``outcomes_for_fit`` gives weight 0."""
        return 0 if self.complete is None else int((~self.complete).sum())

    def outside_bounds(
        self,
        bounds: Mapping[str, tuple[float, float]],
        outcome_bounds: tuple[float, float],
    ) -> dict[str, float]:
        """Analyst-only: the share of each column's present values outside its public bounds.

        The outcome and every numeric covariate (one-hot columns are 0 or 1); a value outside
        is clipped by the release, so a large share says the bounds are in other units than
        the data (grams against kilograms) or too narrow. A fact about the sensitive data:
        show it to the analyst, never publish it.

        Examples
        --------
        >>> import io
        >>> csv = "age,arm,y\\n" + "".join(f"{30 + i},{i % 2},{i % 3}\\n" for i in range(40))
        >>> trial = read_trial(io.StringIO(csv), treatment="arm", outcome="y")
        >>> trial.outside_bounds({"age": (18, 60)}, (0, 1))
        {'y': 0.325, 'age': 0.225}
        """
        lower, upper = self.feature_bounds(bounds)
        lo, hi = float(outcome_bounds[0]), float(outcome_bounds[1])
        columns: dict[str, tuple[np.ndarray, float, float]] = {
            self.outcome: (np.asarray(self.B, dtype=float), lo, hi)
        }
        dummies = {f"{col}={lev}" for col, levels in self.categories.items() for lev in levels[1:]}
        X = np.asarray(self.X, dtype=float)
        for j, c in enumerate(self.covariates):
            if c not in dummies:
                columns[c] = (X[:, j], float(lower[j]), float(upper[j]))
        ok = np.ones(X.shape[0], bool) if self.complete is None else np.asarray(self.complete)
        out = {}
        for c, (v, lo, hi) in columns.items():
            v = v[ok & np.isfinite(v)]
            out[c] = float(((v < lo) | (v > hi)).mean()) if v.size else 0.0
        return out

    def outcomes_for_fit(
        self, outcome_bounds: tuple[float, float], larger_is_better: bool = True
    ) -> np.ndarray:
        """Outcomes with each incomplete row at the worst public bound, so its OWL weight is 0.

        The benefit of the worst bound is 0 (B - lo, or hi - B), so the row's weight
        benefit / π is 0 whatever its other cells hold. This is a per-row, data-independent
        map: replacing one patient's row still changes one (x, a, w) with w in [0, W], so the
        sensitivity 2W/γ of the release on the public n rows covers a row with a missing value.

        Parameters
        ----------
        outcome_bounds : (lo, hi), public
        larger_is_better : bool

        Returns
        -------
        ndarray (n,)
        """
        if not isinstance(larger_is_better, (bool, np.bool_)):
            raise TypeError(
                "larger_is_better must be True or False (in a data dictionary, the "
                f"field larger_is_better), got {larger_is_better!r}"
            )
        if self.complete is None:
            return self.B
        worst = float(outcome_bounds[0] if larger_is_better else outcome_bounds[1])
        return np.where(self.complete, self.B, worst)

    def feature_bounds(
        self, bounds: Mapping[str, tuple[float, float]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Public feature bounds in the column order of ``X``.

        Parameters
        ----------
        bounds : mapping
            ``{column: (lower, upper)}`` for each numeric covariate, entered by the user (or
            taken from a data dictionary), never read off the data. One-hot columns need no
            entry: their bounds are (0, 1).

        Returns
        -------
        (lower, upper) : two float arrays of length p, for ``DPOWL(feature_bounds=...)``.

        Examples
        --------
        >>> import io
        >>> csv = "age,arm,y\\n" + "".join(f"{30 + i},{i % 2},{i % 3}\\n" for i in range(40))
        >>> trial = read_trial(io.StringIO(csv), treatment="arm", outcome="y")
        >>> trial.feature_bounds({"age": (18, 90)})
        (array([18.]), array([90.]))
        """
        dummies = {f"{col}={lev}" for col, levels in self.categories.items() for lev in levels[1:]}
        dummies |= {c + MISSING_SUFFIX for c in self.fills}
        missing = [c for c in self.covariates if c not in bounds and c not in dummies]
        if missing:
            raise TrialDataError(f"give public bounds (lower, upper) for {name_list(missing)}")
        lower, upper = [], []
        for c in self.covariates:
            lo, hi = bounds.get(c, (0.0, 1.0))
            lower.append(float(lo))
            upper.append(float(hi))
        return np.array(lower), np.array(upper)


# --------------------------------------------------------------------------------------------
# Public functions


def read_trial(
    source: Source,
    *,
    treatment: str | None = None,
    outcome: str | None = None,
    covariates: Sequence[str] | None = None,
    propensity: str | None = None,
    treated: Any = None,
    categorical: Sequence[str] | Mapping[str, Sequence[Any]] | None = None,
    incomplete: str = "keep",
    unknown_levels: str = "error",
    dictionary: Any = None,
    arms: Sequence[Any] | None = None,
    binary: Sequence[str] | None = None,
    encoding: str = "utf-8",
    delimiter: str | None = None,
    missing_values: Sequence[str] | None = None,
    outcome_levels: Sequence[Any] | None = None,
    fill: Mapping[str, Any] | None = None,
) -> Trial:
    """Read a two-arm randomized trial from a CSV file, cell by cell.

    How one row is read never depends on another row (docs/architecture.md, privacy rules 8 and
    10): the file is decoded with one declared encoding, each physical line is one record,
    every cell is compared as normalised text with the public labels, and numbers are read
    per cell. A cell that does not read (a number column holding ``x``, an arm that is not
    one of the dictionary's) is a missing value: with ``incomplete="keep"`` its row stays
    (weight 0, baseline level) and ``Trial.n`` is the file's record count.

    Labels are compared by :func:`dpcore.data.labels.label_key`: numbers by value (``1``,
    ``"1"``, ``"01"`` and ``"1.0"`` are one label), other text stripped, Unicode NFC and
    case-insensitive (``"True"`` matches ``TRUE`` and ``true``).

    Parameters
    ----------
    source : str, path, bytes or file object
        A path, the file's bytes, or an open binary or text file (a Streamlit upload works).
        Comma, semicolon, tab and pipe delimiters are recognised from the header line (or
        Excel's ``sep=;`` first line). In a semicolon, tab or pipe file a number cell may use
        a decimal comma (``1,5``), cell by cell. Spaces around names and values are ignored;
        ``""``, ``NA``, ``.``, ``NaN``, ``null`` and the like are missing values.
    treatment : str
        Column holding the arm. Exactly two labels are allowed: 0/1, -1/+1, 1/2,
        True/False or two strings.
    outcome : str
        Numeric outcome column (its direction and public bounds are given to DPOWL).
    covariates : list of str, optional
        Feature columns, in this order. Default: every other column holding at least one
        number, plus the ``categorical`` ones (read off the data: name them for a release).
    propensity : str, optional
        Column holding P(treated | X) for each row, strictly between 0 and 1. Leave it out
        when the randomization probability is a known constant and pass that to DPOWL.
    treated : label, optional
        The label of the treated arm (read as A = +1). Needed unless the labels are 0/1,
        -1/+1, True/False, or a recognised pair such as drug/placebo or treated/control.
        Labels 1/2 always need it: both conventions are common.
    categorical : list of str or dict, optional
        Covariates to one-hot encode (drop-first). A list reads the levels from the file and
        sorts them; a dict ``{column: [levels]}`` gives the levels publicly, baseline first, and
        a value outside them is an error (see ``unknown_levels``). Levels read from the file
        are data: prefer the dict when the encoded column names will be shown next to a
        private release.
    incomplete : {"keep", "drop"}
        "keep" (default) keeps every row, so that ``Trial.n`` is the file's row count
        (public), fills the missing cells with fixed values and marks the row in
        ``Trial.complete``: :meth:`dpcore.DPOWL.fit_trial` (and
        :meth:`Trial.outcomes_for_fit`) give it weight 0, as a private release needs
        (docs/architecture.md, privacy rule 8). "drop" drops a row with a missing value in a
        used column and counts it in ``Trial.n_dropped``: its n depends on the data, so a
        rule fitted on it is not a private release of the file.
    unknown_levels : {"error", "baseline"}
        A value of a categorical column outside its public levels: an error, or read as the
        baseline (every one-hot column 0), which does not depend on the other rows.
    dictionary : Dictionary, path, bytes or dict, optional
        A public data dictionary: it gives every column argument not passed explicitly, the
        two arms and the treated one, and the binary columns.
    arms : two labels, optional
        The treatment's two public labels; a cell that matches neither is missing. Default:
        the dictionary's, else read off the data.
    binary : list of str, optional
        Covariates that are 0/1 and whose yes/no, true/false, y/n cells read as 1/0
        (default: the dictionary's binary columns).
    outcome_levels : two labels, optional
        A binary outcome written as labels (``("0_no", "1_yes")``): the first reads as 0, the
        second as 1, each cell compared by :func:`dpcore.data.labels.label_key`; a cell that
        matches neither is missing. Default: the dictionary's levels of a ``binary`` outcome.
        Which value is better is ``larger_is_better``'s to say (False when 1 is the event to
        avoid).
    fill : mapping, optional
        Public fill-in values ``{covariate: value}`` (a number, or one of a categorical
        covariate's levels), never read from the data: a missing cell of the covariate reads
        as its value, and a column ``"<covariate> is missing"`` (1 there, else 0) follows it,
        so the row keeps its other information instead of getting weight 0. Default: the
        dictionary's ``missing: {"fill": value}`` entries.
    encoding : str
        The file's one encoding, default UTF-8 (a byte-order mark overrides it). A file not
        valid in it is refused, naming the line and byte; declare ``"cp1252"`` for a file
        Excel saved as "CSV" on Windows.
    delimiter : {",", ";", "\\t", "|"}, optional
        Default: detected from the header line.
    missing_values : list of str, optional
        More cell texts that mean missing, such as ``-99`` (default: the dictionary's).

    Returns
    -------
    Trial

    Raises
    ------
    TrialDataError
        When the file or the column choice cannot be read as a two-arm trial; the message
        says what to change. A quoted field that runs past its line refuses the file (records
        are physical lines). Each arm needs ``MIN_ROWS_PER_ARM`` (10) complete rows.
    TypeError
        When ``source`` or a column argument has the wrong type.

    Examples
    --------
    >>> import io
    >>> csv = "age;arm;days\\n" + "".join(
    ...     f"{40 + i % 30};{'drug' if i % 3 else 'placebo'};{5 + i % 4}\\n" for i in range(60)
    ... )
    >>> trial = read_trial(io.StringIO(csv), treatment="arm", outcome="days")
    >>> trial.arms, trial.delimiter, trial.X.shape
    (('drug', 'placebo'), ';', (60, 1))
    >>> from dpcore import DPOWL
    >>> rule = DPOWL(
    ...     epsilon=1.0,
    ...     feature_bounds=trial.feature_bounds({"age": (18, 90)}),
    ...     outcome_bounds=(0, 30),
    ...     larger_is_better=False,
    ...     rng=0,
    ... )
    >>> rule = rule.fit(trial.X, trial.A, trial.B, propensity=2 / 3)
    """
    columns = dict(
        treatment=treatment,
        outcome=outcome,
        covariates=covariates,
        propensity=propensity,
        treated=treated,
        categorical=categorical,
        arms=arms,
        binary=binary,
        missing_values=missing_values,
        outcome_levels=outcome_levels,
        fill=fill,
    )
    larger_is_better = None
    if dictionary is not None:  # every argument not given explicitly, from the dictionary
        columns = trial_arguments(dictionary, **columns)
        larger_is_better = columns.pop("larger_is_better")
    trial = _read(
        source,
        incomplete=incomplete,
        unknown_levels=unknown_levels,
        encoding=encoding,
        delimiter=delimiter,
        **columns,
    )
    return trial if larger_is_better is None else replace(trial, larger_is_better=larger_is_better)


def _read(
    source,
    *,
    treatment,
    outcome,
    covariates,
    propensity,
    treated,
    categorical,
    incomplete,
    unknown_levels,
    arms,
    binary,
    encoding,
    delimiter,
    missing_values,
    other_arms=(),
    design_propensity=None,
    all_arms=None,
    outcome_levels=None,
    fill=None,
):
    """The reader of :func:`read_trial` and :func:`read_arms_trial` (``all_arms``: every
    arm's public label, A then holds each row's arm index)."""
    binary = set(check_names(binary, "binary")) if binary is not None else set()
    check_names(treatment, "treatment", single=True)
    check_names(outcome, "outcome", single=True)
    assert isinstance(treatment, str) and isinstance(outcome, str)  # checked just above
    if covariates is not None:
        covariates = check_names(covariates, "covariates")
    if propensity is not None:
        check_names(propensity, "propensity", single=True)
    if arms is not None and all_arms is None:
        if isinstance(arms, (str, bytes)) or len(arms) != 2:
            raise TypeError(f"arms must be the two arm labels, got {arms!r:.80}")
        arms = tuple(arms)
    categorical = check_categorical(categorical)
    check_choice(incomplete, "incomplete", INCOMPLETE)
    check_choice(unknown_levels, "unknown_levels", UNKNOWN_LEVELS)
    if missing_values is not None:
        if isinstance(missing_values, str) or not all(isinstance(v, str) for v in missing_values):
            raise TypeError(f"missing_values must be a list of texts, got {missing_values!r:.80}")
    wanted = numeric = None  # with the covariates named, only the used columns' cells are
    if covariates is not None:  # kept, and the numeric ones are read as numbers in chunks
        wanted = [treatment, outcome, *covariates, *([propensity] if propensity else [])]
        numeric = {
            c: c in binary
            for c in [outcome, *covariates, propensity]
            if c is not None
            and c not in categorical
            and c != treatment
            and not (c == outcome and outcome_levels is not None)
        }
    table = read_cells(
        source,
        encoding=encoding,
        delimiter=delimiter,
        missing_values=missing_values,
        columns=wanted,
        numeric=numeric,
    )
    for c in set(table.numbers) - ({outcome} if outcome_levels is not None else set()):
        # a column of text named as a number: the wrong column
        _check_some_number(
            table,
            c,
            "outcome" if c == outcome else "propensity" if c == propensity else "covariate",
        )
    check_roles(table.header, treatment, outcome, propensity, covariates, categorical)
    if covariates is None:
        covariates = default_covariates(table, treatment, outcome, propensity, categorical)
    if not covariates:
        raise TrialDataError(
            "no covariates to learn a rule from: the file has no other numeric column; "
            "name the covariates (and any categorical ones) explicitly"
        )
    col = {
        c: table.column(c)
        for c in dict.fromkeys(
            [treatment, outcome, *covariates] + ([propensity] if propensity else [])
        )
    }
    dec = table.decimal
    if outcome_levels is None:
        B = read_numbers(col[outcome], outcome, "outcome", dec)
    else:
        B = binary_labels(col[outcome], outcome, outcome_levels)
    p = None if propensity is None else read_numbers(col[propensity], propensity, "propensity", dec)
    present = np.isfinite(B) & (True if p is None else np.isfinite(p))
    # cells first, each on its own; levels read off the data (no public list) use the rows
    # whose other cells are present, as before
    X, names, categories, xmiss = encode_covariates(
        {c: col[c] for c in covariates},
        covariates,
        categorical,
        unknown_levels,
        dec,
        binary,
        rows=present & col[treatment].notna().to_numpy(),
    )
    fill = dict(fill or {})
    X, names, xmiss = fill_covariates(X, names, categories, xmiss, list(covariates), fill)
    xkeep = ~xmiss.any(axis=1)
    tmiss = col[treatment].isna().to_numpy()
    if not (present & xkeep & ~tmiss).any():
        _all_incomplete(
            table.n,
            dict(zip(covariates, xmiss.T)),
            {treatment: tmiss, outcome: np.isnan(B)}
            | ({} if p is None else {propensity: np.isnan(p)}),
        )
    if all_arms is None:
        A, arm_labels = encode_treatment(
            col[treatment], treatment, treated, arms, rows=present & xkeep
        )
    else:
        A, arm_labels = encode_arms(col[treatment], all_arms), tuple(all_arms)
    n_other = 0
    if other_arms:  # analyst-only: how many of the weight-0 rows are in another arm
        others = {label_key(v) for v in other_arms}
        n_other = int(label_keys(col[treatment]).isin(list(others)).sum())
    keep = present & xkeep & np.isfinite(A)
    n_dropped = int((~keep).sum()) if incomplete == "drop" else 0
    if not keep.any():
        _all_incomplete(table.n, {treatment: np.isnan(A)})
    if np.ptp(B[keep]) == 0:
        raise TrialDataError(
            f"outcome {quote(outcome)} has the same value in every row used; there is nothing to learn"
        )
    if p is not None:
        bad = keep & ((p <= 0) | (p >= 1))
        if bad.any():
            i = int(np.argmax(bad))
            raise TrialDataError(
                f"propensity column {quote(propensity)} must hold P(treated) strictly between 0 and 1, "
                f"found {p[i]:.4g} in data row {i + 1}"
                + ("; if it is a percentage, divide it by 100" if 1 < p[i] <= 100 else "")
            )
    if all_arms is None:
        _check_arm_sizes(np.where(keep, A, 0.0), arm_labels, n_dropped)
    else:
        _check_arm_sizes(
            np.where(keep, A, -1.0), arm_labels, n_dropped, codes=range(len(arm_labels))
        )
    complete = covariates_complete = None
    if incomplete == "keep":
        A = np.where(keep, A, 1.0 if all_arms is None else 0.0)
        B = np.where(keep, B, 0.0)
        X = np.where(xkeep[:, None], X, 0.0)
        p = None if p is None else np.where(keep, p, 0.5)
        complete, covariates_complete = keep, xkeep
        rows = np.arange(1, table.n + 1)
    else:
        A, B, X = A[keep], B[keep], X[keep]
        p = None if p is None else p[keep]
        rows = np.flatnonzero(keep) + 1
    X = np.ascontiguousarray(X, dtype=float)
    for a in (X, A, B, rows, complete, covariates_complete, p):
        if a is not None:
            a.setflags(write=False)
    return Trial(
        X=X,
        A=A,
        B=B,
        propensity=p,
        covariates=tuple(names),
        treatment=treatment,
        outcome=outcome,
        treated=arm_labels[0] if all_arms is None else None,
        arms=arm_labels,
        n_dropped=n_dropped,
        propensity_column=propensity,
        categories=categories,
        delimiter=table.delimiter,
        encoding=table.encoding,
        decimal=table.decimal,
        rows=rows,
        complete=complete,
        covariates_complete=covariates_complete,
        design_propensity=design_propensity,
        other_arms=tuple(other_arms),
        n_other_arms=n_other,
        fills=fill,
    )


def read_arms_trial(
    source: Source,
    *,
    dictionary: Any,
    incomplete: str = "keep",
    unknown_levels: str = "error",
    encoding: str = "utf-8",
    delimiter: str | None = None,
) -> Trial:
    """Read a trial over all the arms its dictionary lists (K >= 2), for a K-arm rule.

    As :func:`read_trial` with a dictionary, but every one of the treatment's public levels is
    an arm: ``Trial.arms`` holds the K labels in the dictionary's order, ``Trial.A`` each
    row's arm index (0..K-1, a float), ``Trial.arm_probabilities`` the design's
    probabilities and ``Trial.treated`` is None. A cell that is none of the arms is a missing
    value. Fit with :class:`dpcore.owl.karm.KArmOWL` (``docs/k_arm.md``).

    Parameters
    ----------
    source : str, path, bytes or file object
    dictionary : Dictionary, path, bytes or dict
        Required: the arms are public levels, never read off the data.
    incomplete : {"keep", "drop"}
        "keep" (default here: a release's n is the file's row count) keeps incomplete rows at
        weight 0 (``Trial.complete``).
    unknown_levels, encoding, delimiter
        As in :func:`read_trial`.

    Returns
    -------
    Trial
        Over every arm: ``arms`` the K labels, ``A`` each row's arm index.

    Raises
    ------
    TrialDataError
        When the dictionary lists no arms, or an arm has fewer than ``MIN_ROWS_PER_ARM``
        complete rows.

    Examples
    --------
    >>> import io
    >>> d = {
    ...     "treatment": "arm",
    ...     "outcome": "y",
    ...     "arm_probabilities": [0.5, 0.25, 0.25],
    ...     "columns": [
    ...         {"name": "age", "bounds": [0, 100]},
    ...         {"name": "arm", "role": "treatment", "levels": ["a", "b", "c"]},
    ...         {"name": "y", "role": "outcome", "bounds": [0, 10]},
    ...     ],
    ... }
    >>> csv = "age,arm,y\\n" + "".join(f"{i},{'abac'[i % 4]},{i % 7}\\n" for i in range(80))
    >>> trial = read_arms_trial(io.StringIO(csv), dictionary=d)
    >>> trial.arms, trial.arm_probabilities, trial.A[:4].tolist()
    (('a', 'b', 'c'), (0.5, 0.25, 0.25), [0.0, 1.0, 0.0, 2.0])
    """
    d = read_dictionary(dictionary)
    kw = d.read_trial_kwargs()
    if not d.arms:
        raise TrialDataError(
            f"the dictionary lists no arms for {quote(d.treatment)}: give the "
            "treatment's levels (every arm) to fit a rule over them"
        )
    probs = d.arm_probabilities
    if probs is None and len(d.arms) == 2 and d.known_propensity is not None:
        probs = tuple(d.arm_probability(v) for v in d.arms)
    trial = _read(
        source,
        **{**kw, "treated": None, "arms": None},
        incomplete=incomplete,
        unknown_levels=unknown_levels,
        encoding=encoding,
        delimiter=delimiter,
        all_arms=tuple(d.arms),
    )
    return replace(
        trial,
        arm_probabilities=probs,
        propensity=None,
        propensity_column=None,
        larger_is_better=d.larger_is_better,
    )


def _check_some_number(table, name, role):
    """Refuse a column read as numbers in which no present cell is one (it holds text)."""
    v, here = table.numbers[name], table.present[name]
    if here.any() and not np.isfinite(v[here]).any():
        i, text = table.example[name]
        hint = (
            "; name it in categorical to one-hot encode it, or leave it out"
            if role == "covariate"
            else ""
        )
        raise TrialDataError(
            f"{role} {quote(name)} is not numeric: data row {i + 1} holds {quote(text)}{hint}"
        )


def _all_incomplete(n, *masks):
    counts = {c: int(m.sum()) for d in masks for c, m in d.items()}
    worst = max(counts, key=lambda c: counts[c])
    raise TrialDataError(
        f"every one of the {n} rows has a missing value in a used column "
        f"(most often {quote(worst)}, missing in {_rows(counts[worst])}); "
        "leave that column out or fill it in"
    )


def _check_arm_sizes(A, arms, n_dropped, codes=(1.0, -1.0)):
    for label, sign in zip(arms, codes):
        k = int(np.sum(A == sign))
        if k < MIN_ROWS_PER_ARM:
            after = f" after dropping {_rows(n_dropped)} with missing values" if n_dropped else ""
            raise TrialDataError(
                f"arm {quote(label)} has {_rows(k)}{after}; each arm needs at least {MIN_ROWS_PER_ARM}"
            )


def _rows(k):
    return f"{k} row" if k == 1 else f"{k} rows"
