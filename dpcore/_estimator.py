"""What the private estimators share: scikit-learn's parameter conventions and their errors."""

from __future__ import annotations

import inspect


class PrivacyWarning(UserWarning):
    """A choice that voids or weakens the differential-privacy guarantee."""


class ConvergenceError(RuntimeError):
    """The weighted-ERM solver did not reach the exact minimiser the privacy proof assumes."""


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``."""


class PrivateEstimator:
    """Keyword-only hyper-parameters stored unchanged by ``__init__`` (as in scikit-learn).

    Subclasses validate them in ``_check_params`` when ``fit`` runs, and name their released
    attributes in ``_released`` so that use before ``fit`` gives a clear error.
    """

    _released = ("coef_", "intercept_")

    def _store_params(self, params):
        """Called by ``__init__`` with ``locals()``: keep every hyper-parameter unchanged."""
        for name in self._param_names():
            setattr(self, name, params[name])

    @classmethod
    def _param_names(cls):
        params = inspect.signature(cls.__init__).parameters.values()
        return [p.name for p in params if p.kind == p.KEYWORD_ONLY]

    def get_params(self, deep=False):
        """The hyper-parameters as a dict (``deep`` is accepted for scikit-learn compatibility)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set hyper-parameters by name; unknown names raise ``ValueError``."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"{name!r} is not a parameter of {type(self).__name__}; "
                                 f"valid parameters: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default
                    for p in inspect.signature(type(self).__init__).parameters.values()}
        shown = [f"{k}={v!r}" for k, v in self.get_params().items()
                 if not _same(v, defaults.get(k))]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _check_fitted(self):
        if not all(hasattr(self, attr) for attr in self._released):
            raise NotFittedError(f"This {type(self).__name__} is not fitted yet: call fit first.")


def _same(a, b):
    try:
        return bool(a is b or a == b)
    except (TypeError, ValueError):  # arrays compare element-wise
        return False
