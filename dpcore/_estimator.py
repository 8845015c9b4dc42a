"""What the private estimators share: scikit-learn's conventions without depending on it.

The estimators follow scikit-learn's protocol by duck typing (``get_params``/``set_params``,
``__sklearn_tags__``, ``classes_``, ``feature_names_in_``, ``score``) instead of inheriting
``sklearn.base.BaseEstimator``, so that scikit-learn stays an optional extra: a class whose
bases changed with what happens to be installed would behave differently in the app (which
does not ship scikit-learn) and in a notebook, and ``import dpcore`` would pay scikit-learn's
import time. scikit-learn's own functions (``clone``, ``Pipeline``, ``cross_val_score``,
``GridSearchCV``, ``is_classifier``, ``check_estimator``) need only the protocol; the one
thing that needs scikit-learn's classes, its ``NotFittedError``, is raised as a subclass of
both ours and scikit-learn's whenever scikit-learn is loaded.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import numpy as np


class PrivacyWarning(UserWarning):
    """A choice that voids or weakens the differential-privacy guarantee."""


class ClippingWarning(UserWarning):
    """Data were clipped to their public bounds (weights, outcomes or covariates).

    Analyst-only: whether, and how much, the sensitive data were clipped is a fact about
    them, never to be published with a release. Never a :class:`PrivacyWarning` (clipping to
    public bounds is what keeps the guarantee), so filtering it hides no privacy warning.
    """


class NoiseWarning(UserWarning):
    """The release's noise is larger than any coefficient its public bounds allow.

    Computed from public values only (n, ε, γ, W, C and the number of coefficients), so it
    may be shown with the release.
    """


#: Share of outcomes (or of rows with a covariate) outside the public bounds above which
#: :class:`ClippingWarning` says so: a sign of bounds in the wrong units.
CLIPPED_SHARE_WARNING = 0.05
#: The message of the weight-clipping warning, which library calls may filter by name.
WEIGHT_CLIPPING_MESSAGE = r"some .* exceed the weight bound W="


class ConvergenceError(RuntimeError):
    """The weighted-ERM solver did not reach the exact minimiser the privacy proof assumes."""


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``.

    When scikit-learn is loaded, the error raised is also a
    ``sklearn.exceptions.NotFittedError``, so code written for either catches it.
    """


_SKLEARN_NOT_FITTED: dict[type, type] = {}


def not_fitted_error(message: str) -> NotFittedError:
    """A :class:`NotFittedError`, which is also scikit-learn's when scikit-learn is loaded.

    Only ``sys.modules`` is consulted: code that catches scikit-learn's class has imported it,
    and code that has not does not pay scikit-learn's import time.
    """
    exceptions = sys.modules.get("sklearn.exceptions")
    if exceptions is None:
        return NotFittedError(message)
    base = exceptions.NotFittedError
    cls = _SKLEARN_NOT_FITTED.get(base)
    if cls is None:
        cls = type("NotFittedError", (NotFittedError, base), {"__module__": __name__})
        _SKLEARN_NOT_FITTED[base] = cls
    return cls(message)


def conversion_warning() -> type[Warning]:
    """scikit-learn's ``DataConversionWarning`` when it is loaded, else ``UserWarning``."""
    exceptions = sys.modules.get("sklearn.exceptions")
    return exceptions.DataConversionWarning if exceptions is not None else UserWarning


def fitted_upstream(estimator: Any) -> list[str]:
    """The steps before ``estimator`` in the scikit-learn ``Pipeline`` fitting it now that
    learned parameters from the data (a ``StandardScaler``'s mean and scale): each named
    ``"name (Class)"``; empty outside a pipeline.

    A fitted scikit-learn step holds its learned parameters in public attributes ending in
    ``_`` (beyond ``n_features_in_`` and ``feature_names_in_``), so a stateless step (a
    ``FunctionTransformer`` of public constants) is not one. The pipeline is found on the call
    stack: ``Pipeline.fit`` passes its transformed rows to the last step and nothing else.
    """
    frame = inspect.currentframe()
    try:
        for _ in range(40):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                return []
            owner = frame.f_locals.get("self")
            steps = getattr(owner, "steps", None)
            if not type(owner).__module__.startswith("sklearn.pipeline"):
                continue
            if not isinstance(steps, list):
                continue
            at = next((i for i, step in enumerate(steps) if step[1] is estimator), None)
            if at is not None:
                return [
                    f"{name} ({type(step).__name__})" for name, step in steps[:at] if _learned(step)
                ]
        return []
    finally:
        del frame


def _learned(step: Any) -> bool:
    if step is None or isinstance(step, str):  # "passthrough", "drop"
        return False
    own = ("n_features_in_", "feature_names_in_")
    return any(k.endswith("_") and not k.startswith("_") and k not in own for k in vars(step))


class PrivateEstimator:
    """Keyword-only hyper-parameters stored unchanged by ``__init__`` (as in scikit-learn).

    Subclasses validate them in ``_check_params`` when ``fit`` runs, and name their released
    attributes in ``_released`` so that use before ``fit`` gives a clear error.
    """

    _released: tuple[str, ...] = ("coef_", "intercept_")
    feature_names_in_: np.ndarray

    def _store_params(self, params: dict[str, Any]) -> None:
        """Called by ``__init__`` with ``locals()``: keep every hyper-parameter unchanged."""
        for name in self._param_names():
            setattr(self, name, params[name])

    @classmethod
    def _param_names(cls) -> list[str]:
        params = inspect.signature(cls.__init__).parameters.values()
        return [p.name for p in params if p.kind == p.KEYWORD_ONLY]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The hyper-parameters as a dict (none of them is an estimator, so ``deep`` changes nothing)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> PrivateEstimator:
        """Set hyper-parameters by name; unknown names raise ``ValueError``."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"{name!r} is not a parameter of {type(self).__name__}; "
                    f"valid parameters: {', '.join(valid)}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        shown = [
            f"{k}={v!r}" for k, v in self.get_params().items() if not _same(v, defaults.get(k))
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags (only scikit-learn calls this, so it is imported here).

        A binary classifier; ``poor_score`` when noise is added (a private fit at the default
        budget on a few hundred rows need not reach scikit-learn's accuracy bar) and
        ``non_deterministic`` when no ``rng`` seed fixes the noise.
        """
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        epsilon = getattr(self, "epsilon", 1.0)
        private = not (isinstance(epsilon, (int, float)) and np.isinf(epsilon))
        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(poor_score=private, multi_class=False),
            input_tags=InputTags(),
            non_deterministic=getattr(self, "rng", None) is None and private,
        )

    def _check_fitted(self) -> None:
        if not all(hasattr(self, attr) for attr in self._released):
            raise not_fitted_error(
                f"This {type(self).__name__} instance is not fitted yet: call fit first."
            )

    def _set_feature_names(self, X: Any) -> None:
        """``feature_names_in_`` from a DataFrame's string column names, as scikit-learn does."""
        names = _column_names(X)
        if names is None:
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            self.feature_names_in_ = names

    def _check_feature_names(self, X: Any) -> None:
        """New rows must carry the fitted column names, in order, when the fit had names."""
        import warnings

        fitted = getattr(self, "feature_names_in_", None)
        names = _column_names(X)
        if fitted is None and names is not None:
            warnings.warn(
                f"X has feature names, but {type(self).__name__} was fitted without feature names",
                UserWarning,
                stacklevel=3,
            )
        elif fitted is not None and names is None:
            warnings.warn(
                f"X does not have valid feature names, but {type(self).__name__} was "
                "fitted with feature names",
                UserWarning,
                stacklevel=3,
            )
        elif fitted is not None and names is not None and not np.array_equal(fitted, names):
            raise ValueError(
                "The feature names should match those that were passed during fit.\n"
                f"Fitted with {list(fitted)[:10]}, got {list(names)[:10]}"
            )


def _column_names(X: Any) -> np.ndarray | None:
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray(columns, dtype=object)
    if names.size == 0 or not all(isinstance(c, str) for c in names):
        return None
    return names


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a is b or a == b)
    except (TypeError, ValueError):  # arrays compare element-wise
        return False
