"""A private treatment rule over K >= 2 arms: K - 1 DP-OWL rules against a reference arm.

The mechanism (``docs/k_arm.md`` has the same derivation and the measurements)
---------------------------------------------------------------------------
A trial randomizes each patient to one of K arms with public design probabilities p_1..p_K
(``arm_probabilities`` of the data dictionary). One arm is the reference r (by default the
first listed, usually the standard of care). For each other arm k a binary DP-OWL rule
compares k against r on **all n rows** of the file:

* label y_i = +1 when A_i = k, -1 when A_i = r;
* weight w_i = benefit_i / pi_k(A_i) with pi_k(k) = p_k / (p_k + p_r), pi_k(r) = 1 - pi_k(k)
  for a row in arm k or r; weight 0 (its outcome set to the worst public bound, exactly as an
  incomplete row, :meth:`dpcore.Trial.outcomes_for_fit`) for a row in any other arm, or with a
  missing value.

**What each binary rule targets.** For a row in arm a in {k, r} (sign s_a = +1 for k, -1
for r), p_a / pi_k(a) = p_k + p_r, and X is independent of A (a constant design), so

    E[1(A = a) w phi(s_a f(X))] = p_a E[b(a) phi(s_a f(X))] / pi_k(a)
                                = (p_k + p_r) E[b(a) phi(s_a f(X))],

with b(a) the benefit under arm a. Summed over a in {k, r}, the weighted risk on the n rows
is (p_k + p_r) times the population OWL risk of "k against r",
E[b(k) phi(f(X)) + b(r) phi(-f(X))], whose minimiser's sign estimates
sign(E[b(k) - b(r) | X]). The constant factor is absorbed by gamma (the rule at gamma is the
population risk's rule at gamma / (p_k + p_r)). So the weights divide by the conditional
propensity p_a / (p_k + p_r), as in a two-arm trial randomized p_k : p_r, with its weight
bound; dividing by the marginal p_a instead gives the population risk itself at a weight
bound (p_k + p_r) times larger: the same rule at a rescaled gamma.

**Privacy.** Neighbouring files replace one patient's row (the public n is the file's row
count; the arms, their probabilities, the bounds and every hyper-parameter are public).
In each binary problem a row enters as one (x, y, w) with w in [0, W_k] whatever arm it is
in, so replacing it (it may move between k, r and another arm, or lose a value) changes one
weighted record: the L2 sensitivity of rule k's minimiser is 2 W_k / gamma_k (plus C),
exactly as in a two-arm trial, and the rule is released with epsilon_k = epsilon / (K - 1)
(:func:`rule_budget`). The K - 1 releases all read the same patients (a reference-arm row is
in every one of them), so they compose sequentially: by basic composition the K - 1 rules
together are (sum_k epsilon_k) = epsilon-DP. Their noises are independent draws. The
recommendation is post-processing of the released rules. Nothing else is released: the
shapes (K - 1 rules, p coefficients each), the arms, gamma_k and W_k depend on public values
only.

**The recommendation.** Arm r when every score f_k(x) <= 0; otherwise argmax_k f_k(x) (ties
to the first listed). What this guarantees: the recommended arm k != r is preferred to r by
its own released comparison (f_k(x) > 0), and r is recommended exactly when every comparison
prefers r. Choosing among several arms with f_k(x) > 0 by the largest score is a heuristic:
the scores are separately fitted hinge-type margins, not calibrated effect estimates, so a
larger f_k does not certify that k beats k'. With equal design probabilities the K - 1
problems share W and gamma and their scores share a scale; with unequal ones they need not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._estimator import PrivateEstimator
from .._validation import (
    check_epsilon,
    check_matrix,
    check_outcome_range,
    check_vector,
)
from ..data.labels import label_key
from ..privacy.composition import record_release, void_reasons
from .dpowl import DPOWL
from .rule import choose_arm
from .rule_learner import outcome_direction

if TYPE_CHECKING:
    from ..data.trial import Trial

__all__ = ["KArmOWL", "arm_indices", "rule_budget"]


def rule_budget(epsilon: float, n_rules: int) -> float:
    """Each binary rule's ε: ``epsilon / n_rules``, so that basic composition over the
    ``n_rules`` releases on the same patients spends ``epsilon`` in total."""
    return check_epsilon(epsilon) / int(n_rules)


def arm_indices(A: ArrayLike, arms: Sequence[Any]) -> np.ndarray:
    """Each row's index in the public labels ``arms`` (labels compared as the reader does).

    Raises
    ------
    ValueError
        When a row's label is none of ``arms`` (a row to leave out belongs at weight 0 with
        an arm index and the worst outcome bound, as :func:`dpcore.read_arms_trial` does).
    """
    keys = {label_key(v): i for i, v in enumerate(arms)}
    values = np.asarray(A, dtype=object).reshape(-1)
    out = np.array([keys.get(label_key(v), -1) for v in values], dtype=int)
    if (out < 0).any():
        bad = values[int(np.argmax(out < 0))]
        raise ValueError(f"A holds {bad!r}, which is not one of the arms {list(arms)!r}")
    return out


class KArmOWL(PrivateEstimator):
    """A private rule that recommends one of K arms: K - 1 DP-OWL rules against a reference.

    Parameters
    ----------
    epsilon : float
        The whole release's budget; each of the K - 1 rules gets ``epsilon / (K - 1)``
        (:func:`rule_budget`; the module's docstring has the privacy argument).
    gamma, weight_bound, huber_h, C, feature_bounds, fit_intercept
        As in :class:`dpcore.DPOWL`, for every binary rule (``gamma="paper"``: the table's
        gamma at (epsilon / (K - 1), n), scaled by that rule's W). ``weight_bound`` None: each
        rule's (hi - lo) / min(pi_k, 1 - pi_k) with pi_k = p_k / (p_k + p_ref).
    outcome_bounds : (lo, hi)
        Required: public bounds (rows outside a comparison get weight 0 through them).
    larger_is_better : bool
        Required, as in :class:`dpcore.DPOWL`: :meth:`fit_trial` takes it from the trial's
        dictionary when it is not given here; ``larger_is_better_`` holds the one used.
    reference : label, optional
        The arm every other arm is compared against. Default: the first of ``arms``.
    rng : None, int or Generator
        One Generator draws every rule's noise.

    Attributes
    ----------
    arms_ : tuple, every arm's label (public)
    reference_ : the reference arm
    compared_ : tuple, the K - 1 other arms, in the order of ``rules_``
    rules_ : list of fitted DPOWL, rule j compares ``compared_[j]`` (+1) against the reference
    epsilons_, sensitivities_, weight_bounds_, gammas_ : per rule
    coef_ : ndarray (K - 1, p), intercept_ : ndarray (K - 1,), the released scores
    not_private_because_ : tuple of str, why the release has no guarantee (empty: it has one),
        in the ledger's and the rule file's words (:func:`dpcore.privacy.composition.void_reasons`)
    diagnostics_ : list of each rule's analyst-only diagnostics (never to be published)

    Examples
    --------
    >>> from dpcore.owl.simulate import K_ARM_TRIAL
    >>> data = K_ARM_TRIAL.sample(600, rng=0)
    >>> rule = KArmOWL(
    ...     epsilon=2.0,
    ...     outcome_bounds=K_ARM_TRIAL.outcome_bounds,
    ...     feature_bounds=K_ARM_TRIAL.feature_bounds,
    ...     larger_is_better=True,
    ...     rng=1,
    ... )
    >>> rule = rule.fit(
    ...     data["X"], data["A"], data["B"], K_ARM_TRIAL.arm_probabilities, arms=K_ARM_TRIAL.arms
    ... )
    >>> rule.epsilons_, rule.recommend(data["X"][:3]).shape
    ((1.0, 1.0), (3,))
    """

    _released = ("coef_", "intercept_")
    epsilon: float
    gamma: float | str
    weight_bound: float | None
    huber_h: float
    C: float | str
    feature_bounds: tuple[ArrayLike, ArrayLike] | None
    outcome_bounds: tuple[float, float] | None
    larger_is_better: bool
    fit_intercept: bool
    reference: Any
    rng: Any

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        gamma: float | str = "paper",
        weight_bound: float | None = None,
        huber_h: float = 0.5,
        C: float | str = 0.0,
        feature_bounds: tuple[ArrayLike, ArrayLike] | None = None,
        outcome_bounds: tuple[float, float] | None = None,
        larger_is_better: bool | None = None,
        fit_intercept: bool = True,
        reference: Any = None,
        rng: Any = None,
    ) -> None:
        self._store_params(locals())

    def fit(
        self,
        X: ArrayLike,
        A: ArrayLike,
        B: ArrayLike,
        arm_probabilities: Sequence[float] | Mapping[Any, float],
        *,
        arms: Sequence[Any],
        ledger: Any = None,
    ) -> KArmOWL:
        """Fit and release the K - 1 rules (one release of ``epsilon`` in the ledger).

        Parameters
        ----------
        X : array-like (n, p)
        A : array-like (n,), each row's arm label (one of ``arms``)
        B : array-like (n,), outcomes; a row to leave out (missing value) holds the worst
            public bound, so its weight is 0 in every rule
        arm_probabilities : sequence aligned with ``arms``, or ``{label: p}``
            The design's public P(A = arm); they must sum to 1.
        arms : sequence of K >= 2 public labels
        ledger : PrivacyLedger, optional
            The release is recorded once, as one release of ``epsilon`` (no guarantee with
            an int seed, epsilon = inf or bounds read from the data), after all K - 1 rules
            are computed and before any released attribute is set.

        Returns
        -------
        self
        """
        arms = tuple(arms)
        if len(arms) < 2:
            raise ValueError(f"a rule needs at least two arms, got {list(arms)!r}")
        codes = arm_indices(A, arms)
        direction = outcome_direction(self.larger_is_better, None, self.outcome_bounds)
        return self._fit_codes(X, codes, B, arm_probabilities, arms, ledger, direction)

    def fit_trial(self, trial: Trial, *, ledger: Any = None) -> KArmOWL:
        """Fit on a trial from :func:`dpcore.read_arms_trial` (its arms, probabilities and
        incomplete rows at weight 0)."""
        if trial.arm_probabilities is None:
            raise ValueError(
                "this trial has no arm probabilities: read it with "
                "read_arms_trial and a dictionary that gives arm_probabilities"
            )
        direction = outcome_direction(
            self.larger_is_better, trial.larger_is_better, self.outcome_bounds
        )
        B = trial.B
        if trial.complete is not None:
            B = trial.outcomes_for_fit(self.outcome_range(), direction)
        X = pd.DataFrame(np.asarray(trial.X), columns=list(trial.covariates))
        codes = np.asarray(trial.A, dtype=int)
        probs, arms = trial.arm_probabilities, tuple(trial.arms)
        return self._fit_codes(X, codes, B, probs, arms, ledger, direction)

    # ------------------------------------------------------------------------------------
    def outcome_range(self) -> tuple[float, float]:
        """The public outcome bounds (lo, hi), checked: every binary rule's, and the
        evaluation's (a row outside a comparison gets weight 0 through the worst of them)."""
        if self.outcome_bounds is None:
            raise ValueError(
                "KArmOWL needs public outcome_bounds: a row outside a comparison "
                "gets weight 0 through the worst bound"
            )
        return check_outcome_range(self.outcome_bounds)

    def _probabilities(self, probs: Any, arms: tuple) -> np.ndarray:
        if isinstance(probs, Mapping):
            given = {label_key(k): float(v) for k, v in probs.items()}
            missing = [a for a in arms if label_key(a) not in given]
            if missing:
                raise ValueError(f"arm_probabilities gives no probability for {missing!r}")
            probs = [given[label_key(a)] for a in arms]
        p = check_vector(probs, "arm_probabilities", len(arms))
        if not ((p > 0) & (p < 1)).all() or abs(p.sum() - 1.0) > 1e-3:
            raise ValueError(f"arm_probabilities must lie in (0, 1) and sum to 1, got {p.tolist()}")
        return p

    def _fit_codes(
        self,
        X: Any,
        codes: np.ndarray,
        B: ArrayLike,
        probs: Any,
        arms: tuple,
        ledger: Any,
        larger_is_better: bool,
    ) -> KArmOWL:
        check_epsilon(self.epsilon)
        lo, hi = self.outcome_range()
        p = self._probabilities(probs, arms)
        ref = 0 if self.reference is None else int(arm_indices([self.reference], arms)[0])
        self._set_feature_names(X)
        Xm = check_matrix(X, allow_1d=False)
        n = Xm.shape[0]
        B = check_vector(B, "B", n)
        if codes.shape != (n,):
            raise ValueError(f"A has {codes.shape[0]} entries but X has {n} rows")
        worst = lo if larger_is_better else hi
        others = [k for k in range(len(arms)) if k != ref]
        eps_k = rule_budget(self.epsilon, len(others))
        gen = np.random.default_rng(self.rng)
        rules: list[Any] = []  # fitted DPOWL (their released attributes are set in fit)
        for k in others:
            pair = (codes == k) | (codes == ref)
            y = np.where(codes == k, 1.0, -1.0)
            # a row in another arm: weight 0 (benefit 0 at the worst bound), as an incomplete row
            Bk = np.where(pair, B, worst)
            model = DPOWL(
                epsilon=eps_k,
                gamma=self.gamma,
                weight_bound=self.weight_bound,
                huber_h=self.huber_h,
                C=self.C,
                feature_bounds=self.feature_bounds,
                outcome_bounds=(lo, hi),
                larger_is_better=larger_is_better,
                fit_intercept=self.fit_intercept,
                rng=gen,
            )
            rules.append(model.fit(Xm, y, Bk, float(p[k] / (p[k] + p[ref]))))
        reasons = tuple(
            void_reasons(any(m.bounds_from_data_ for m in rules), self.epsilon, self.rng)
        )
        if ledger is not None:
            record_release(
                ledger,
                f"K-arm DP-OWL rule ({len(arms)} arms, {len(others)} rules)",
                {"release": float(self.epsilon)},
                reasons,
            )
        self.arms_ = arms
        self.larger_is_better_ = larger_is_better
        self.reference_ = arms[ref]
        self.compared_ = tuple(arms[k] for k in others)
        self.arm_probabilities_ = tuple(float(v) for v in p)
        self.rules_ = rules
        self.epsilons_ = tuple(float(m.epsilon) for m in rules)
        self.sensitivities_ = tuple(float(m.sensitivity_) for m in rules)
        self.weight_bounds_ = tuple(float(m.weight_bound_) for m in rules)
        self.gammas_ = tuple(float(m.gamma_) for m in rules)
        self.scaling_ = rules[0].scaling_
        self.bounds_from_data_ = any(m.bounds_from_data_ for m in rules)
        self.not_private_because_ = reasons
        self.n_features_in_ = rules[0].n_features_in_
        self.diagnostics_ = [m.diagnostics_ for m in rules]
        self.coef_ = np.vstack([m.coef_ for m in rules])
        self.intercept_ = np.array([float(m.intercept_) for m in rules])
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """(n, K - 1) scores: column j favours ``compared_[j]`` over the reference when > 0."""
        self._check_fitted()
        self._check_feature_names(X)
        Xm = np.asarray(X, dtype=float)
        return np.column_stack([m.estimator_.decision_function(Xm) for m in self.rules_])

    def recommend(self, X: ArrayLike) -> np.ndarray:
        """The arm to give each row (an object array of labels; see the module's docstring)."""
        return choose_arm(self.decision_function(X), self.compared_, self.reference_)

    predict = recommend
