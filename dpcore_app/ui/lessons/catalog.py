"""Guided experiments for a class or a student alone: each sets a page and its controls through
the page's URL parameters, says what to look at, and answers from the live numbers (the same
cached ui/compute calls the page makes, so opening the page after the answer costs nothing)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from dpcore_app import page
from dpcore_app.ui.bounds import compute as bounds_compute
from dpcore_app.ui.bounds import explain as bounds_explain
from dpcore_app.ui.bounds.explain import FORM_NAMES
from dpcore_app.ui.common import address, ledger
from dpcore_app.ui.cvar import compute as cvar_compute
from dpcore_app.ui.cvar import explain as cvar_explain
from dpcore_app.ui.owl import compute as owl_compute
from dpcore_app.ui.owl import panels as owl_panels

OWL_REPS = 100  # enough for the answer's intervals, quick enough for a class


@dataclass(frozen=True)
class Lesson:
    """One experiment; ``params`` are the target page's URL parameters (labels, as its widgets
    write them), ``answer`` a function of nothing that returns markdown from live numbers."""

    key: str
    title: str
    question: str
    page: str
    url_path: str
    params: dict
    look: str
    answer: Callable[[], str]
    caveat: str = ""
    terms: tuple = field(default_factory=tuple)
    anchor: str = ""  # the heading on the page that ``look`` points at, if it has one

    def link(self, base: str) -> str:
        """The lesson's absolute link; ``base`` is the app's address (dpcore_app.ui.common.address.app_base)."""
        return address.absolute(self.url_path, self.params, base)

    def look_link(self, base: str) -> str | None:
        """The lesson's link, scrolled to what to look at (its heading), or None."""
        return f"{self.link(base)}#{self.anchor}" if self.anchor else None


def _owl(n, prep="public", compare=(), W="auto"):
    """The DP-OWL sweeps the lesson's link makes the page run (same cache key)."""
    sizes = tuple(sorted({n, *compare}))
    results = owl_compute.sweeps(sizes, "paper", 75, 0.5, W, OWL_REPS, 0, prep)
    return owl_compute.stack_summaries(results)


def _split(summary, n, eps):
    here = owl_compute.cell(summary[summary.n == n], eps)
    best = owl_compute.cell(summary[summary.n == n], math.inf)
    total = here.accuracy_mean - best.accuracy_mean
    noise = here.accuracy_mean - here.accuracy_same_gamma_mean
    return here, best, total, noise, total - noise


def answer_noise() -> str:
    summary = _owl(1000)
    lines, bigger = [], []
    for eps in (0.5, 5.0):
        here, _, total, noise, reg = _split(summary, 1000, eps)
        lines.append(
            f"- ε = {eps:g}: accuracy {here.accuracy_mean:.1f}% ({here.accuracy_lo:.1f}–"
            f"{here.accuracy_hi:.1f}), {total:+.1f} points against the best non-private rule: "
            f"{noise:+.1f} from noise, {reg:+.1f} from the larger γ."
        )
        bigger.append(f"{'the noise' if abs(noise) >= abs(reg) else 'the larger γ'} at ε = {eps:g}")
    return (
        "At n = 1000 with the authors' γ ("
        + str(OWL_REPS)
        + " simulated trials):\n"
        + "\n".join(lines)
        + f"\n\nThe bigger part: {' and '.join(bigger)}."
    )


def answer_small_n() -> str:
    summary = _owl(200, compare=(2000,))
    lines, parts = [], {}
    for n in (200, 2000):
        here, best, total, noise, reg = _split(summary, n, 1.0)
        parts[n] = (noise, reg)
        lines.append(
            f"- n = {n}: private {here.accuracy_mean:.1f}% ({here.accuracy_lo:.1f}–"
            f"{here.accuracy_hi:.1f}) against {best.accuracy_mean:.1f}% without privacy: "
            f"{total:+.1f} points, {noise:+.1f} from the noise and {reg:+.1f} from the larger γ "
            "(the page's split by cause)."
        )
    lengths = owl_compute.noise_lengths((200, 2000), 1.0, "paper", 75, "auto")
    (n0, r0), (n1, r1) = parts[200], parts[2000]
    mostly = (
        "the noise's cost"
        if abs(n0) - abs(n1) >= abs(r0) - abs(r1)
        else "the regularization's cost (the penalty's weight γ/n falls as n grows"
        + (", even as the authors' table raises γ)" if lengths[2000] < lengths[200] else ")")
    )
    return (
        "At ε = 1:\n" + "\n".join(lines) + "\n\nFrom 200 to 2000 patients the cost from the "
        f"noise goes from {n0:+.1f} to {n1:+.1f} points and the cost from the larger γ from "
        f"{r0:+.1f} to {r1:+.1f}: more patients win back mostly {mostly}. The noise's typical "
        f"length dΔ/ε, Δ = (C + 2W)/γ, is {lengths[200]:.1f} at n = 200 and "
        f"{lengths[2000]:.1f} at n = 2000 with the authors' γ, while the signal, the rule's "
        "coefficients, grows with n. With a fixed γ the noise is the same at every n."
    )


def answer_eps_n_tau() -> str:
    work = cvar_compute.workload(200)
    summary = cvar_compute.scalar_summary("uniform", 1.0, work.reps, 0)
    lines, rows = [], []
    for tau, eps in ((0.05, 1.0), (0.5, 0.1), (0.01, 5.0)):
        row = cvar_compute.cell(summary, 2000, tau, eps)
        rows.append(row)
        lines.append(
            f"- τ = {tau:g}, ε = {eps:g}: εnτ = {row.eps_n_tau:g}, privacy error "
            f"{row.privacy_mean:.4f} (95% interval {row.privacy_lo:.4f}–{row.privacy_hi:.4f}; "
            f"total {row.total_mean:.4f})"
        )
    overlap = max(r.privacy_lo for r in rows) <= min(r.privacy_hi for r in rows)
    ratio = max(r.privacy_mean for r in rows) / min(r.privacy_mean for r in rows)
    verdict = (
        "The privacy parts agree within their Monte-Carlo intervals: privacy acts through "
        "εnτ, which is why the curves for different τ fall together on the εnτ axis"
        if overlap
        else f"The privacy parts are of one order, within a factor {ratio:.1f} of each other, "
        "as the rate 1/(εnτ) says; they differ beyond Monte-Carlo error because the released "
        "value is clipped to [0, B], which cuts off more of the noise where the CVaR lies "
        "near a bound. So the curves for different τ fall together on the εnτ axis up to "
        "that clip"
    )
    return (
        "Three settings of n = 2000 with the same εnτ = 100:\n"
        + "\n".join(lines)
        + f"\n\n{verdict}."
    )


def answer_theory() -> str:
    out, failed = [], []
    for label, (n, eps, gamma, h, W) in (
        ("the paper's setting (n = 500, ε = 1)", (500, 1.0, None, 0.5, 30)),
        ("γ = 1, h = 2, W = 1, n = 200", (200, 1.0, 1.0, 2.0, 1)),
    ):
        g = bounds_compute.gamma_used("paper" if gamma is None else "free", gamma or 75, eps, n)
        m = bounds_compute.measure(n, eps, g, h, W, 0.0, 0.05, 0)
        terms = bounds_compute.terms(n, eps, g, h, W, 0.0, 0.05, m.norms)
        q = float(m.excess("re-derived").quantile(0.95))
        cov = bounds_compute.coverages(m.here, eps)
        # The forms by the names the Theory page gives them ("printed" is the code's key).
        held = ", ".join(
            f"the {FORM_NAMES[form]} bound held in {100 * c['share']:.1f}% of releases "
            f"(95% interval {100 * c['lo']:.1f}–{100 * c['hi']:.1f}%)"
            for form, c in cov.items()
        )
        failed += [
            f"{FORM_NAMES[form]} bound at {label}" for form, c in cov.items() if c["hi"] < 0.95
        ]
        ratio = terms["re-derived"]["total"] / q if q > 0 else math.inf
        out.append(
            f"- At {label}: the re-derived bound is {terms['re-derived']['total']:.3g}, "
            f"{ratio:.0f}× the measured 95% quantile {q:.3g}; {held} (the theorem promises 95%)."
        )
    fails = (
        "Measurement rejects the " + "; the ".join(failed) + " (its interval lies below 95%)."
        if failed
        else "Neither bound is rejected by measurement at these settings."
    )
    return "\n".join(out) + "\n\n" + fails


def answer_shift() -> str:
    lines, acc = [], {}
    for prep, W, name in (
        ("public", "auto", "public bounds, W = 48 (no weight clipped)"),
        ("public", 30, "public bounds, W = 30 (the largest weights clipped)"),
        ("paper", "auto", "authors' shift, W = 30"),
    ):
        here = owl_compute.cell(_owl(1000, prep=prep, W=W), 1.0)
        acc[(prep, W)] = here.accuracy_mean
        lines.append(
            f"- {name}: {here.accuracy_mean:.1f}% ({here.accuracy_lo:.1f}–{here.accuracy_hi:.1f}) "
            f"at ε = 1, value {here.value_mean:.2f}"
        )
    gap, by_w = (
        acc[("paper", "auto")] - acc[("public", "auto")],
        acc[("public", 30)] - acc[("public", "auto")],
    )
    return (
        "At n = 1000, ε = 1:\n" + "\n".join(lines) + f"\n\nOf the shift's {gap:+.1f} points over "
        f"public bounds, {by_w:+.1f} come from the smaller weight bound alone (W = 30 against 48: "
        "less noise), which public bounds can also use, privately, by clipping the largest "
        "weights. The rest is the shift itself, which reads each data set's own minimum and so "
        "is not covered by the guarantee."
    )


def answer_ledger() -> str:
    import streamlit as st

    key = st.session_state.get(ledger.IN_USE)
    if key is None:
        return (
            "No dataset in use yet: open the experiment, release a rule on the Your data page, "
            "then come back. Each release adds its ε to the dataset's ledger."
        )
    book = ledger.dataset_ledger(key)
    eps, delta = book.total()
    count = len(book.entries)
    if not count:
        return f"The dataset in use ({key[:10]}) has no private release yet: release one, then look again."
    return (
        f"The dataset in use ({key[:10]}) has {count} private release(s), ε = {eps:g} in total "
        f"(δ = {delta:g}), over every session and restart. Releases on the same patients compose: "
        "the total bounds what all of them together reveal about one patient."
    )


OWL = page("dp_owl")
_OWL_BASE = {"reps": str(OWL_REPS)}
LESSONS = (
    Lesson(
        "noise",
        "Noise against regularization",
        "Privacy costs accuracy twice: the noise itself, and the larger γ that keeps the noise "
        "small. Which part costs more at ε = 0.5, and at ε = 5?",
        OWL,
        "dp-owl",
        {**_OWL_BASE, "eps": "0.5", "compare": ""},
        "The line under the cards that splits the gap into “from noise” and “from regularization”, and on the ε chart "
        "the band's distance to the grey dashed line (noise) and dashed to dotted (γ).",
        answer_noise,
        "The split uses the authors' γ table; a γ tuned for your own setting "
        "(Algorithm 2 on the same page) moves the balance.",
        ("gamma", "points"),
        anchor=owl_panels.CARDS_ANCHOR,
    ),
    Lesson(
        "small_n",
        "Why small trials hurt",
        "At ε = 1, how much accuracy does privacy cost with 200 patients, and with 2000?",
        OWL,
        "dp-owl",
        {**_OWL_BASE, "eps": "1", "n": "200", "compare": "2000"},
        "The accuracy-against-n chart: the private band closes on the grey non-private band as n grows.",
        answer_small_n,
        "",
        ("n", "accuracy"),
        anchor=owl_panels.CURVES_ANCHOR,
    ),
    Lesson(
        "eps_n_tau",
        "The effective tail sample size εnτ",
        "Private CVaR averages the worst τ share. Why do curves for different τ fall onto one "
        "curve when plotted against εnτ?",
        page("cvar"),
        "cvar",
        {"x": "eps_n_tau", "n": "2000"},
        "The error chart against εnτ: one curve per τ, and where they meet the 1/(εnτ) rate.",
        answer_eps_n_tau,
        "Only the privacy part collapses; the statistical part depends on nτ.",
        ("eps_n_tau", "tau", "CVaR"),
        anchor=cvar_explain.ERRORS_ANCHOR,
    ),
    Lesson(
        "theory",
        "Theory against measurement",
        "How close is Theorem 10's bound to what the mechanism actually does, and where does the "
        "bound as transcribed from the paper fail?",
        page("bounds"),
        "bounds",
        {"eps": "1", "n": "200", "gamma_mode": "fixed", "gamma": "1", "h": "2", "W": "1"},
        "The coverage lines under the verdict, and the stacked terms against the red measured excess.",
        answer_theory,
        "The bound holds with probability 1 − ρ over the noise; the measured share "
        "has its own Monte-Carlo interval. The re-derived form is this project's derivation, "
        "not a theorem of the paper. Rates hold up to constants.",
        ("rho", "gamma", "h", "W"),
        anchor=bounds_explain.TERMS_ANCHOR,
    ),
    Lesson(
        "shift",
        "Honest bounds against the authors' shift",
        "The paper's code shifts outcomes by each data set's own minimum. How much better does "
        "it look than public bounds, and why is that not a fair comparison?",
        OWL,
        "dp-owl",
        {**_OWL_BASE, "eps": "1", "prep": "authors' shift", "compare": ""},
        "The coverage caption under the cards (not covered by the guarantee), then switch the "
        "preprocessing back to public bounds and compare the cards.",
        answer_shift,
        "The shift reads the data: its curves reproduce the paper, not a private release.",
        ("public bounds", "authors' shift", "W"),
        anchor=owl_panels.CARDS_ANCHOR,
    ),
    Lesson(
        "ledger",
        "The privacy ledger",
        "Release a private rule twice from the same trial. What has this file spent, over every "
        "session, and what does that total protect?",
        page("your_data"),
        "your-data",
        {"file": "demo: paper's trial (1:1)", "eps": "1"},
        "The sidebar's privacy ledger after each release.",
        answer_ledger,
        "The total is basic composition, an upper bound; the ledger is durable and "
        "per dataset, so other sessions' releases on the same file count too.",
        ("ledger", "epsilon"),
    ),
)
