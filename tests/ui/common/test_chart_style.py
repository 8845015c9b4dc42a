"""Every chart of every page's default view reads on a projector and a phone, in light and dark:
each text at least 14 px, and each text colour a figure sets itself at least 4.5:1 (WCAG AA)
against Streamlit's light (#FFFFFF) and dark (#0E1117) backgrounds.

Read from each figure's own layout (``fig.to_dict()``), as the browser receives it; the template
is the theme's own (Streamlit swaps its colours in per theme) and is left out. A size the figure
leaves unset is taken from Streamlit's plotly theme, which sets 12 px tick labels and legends,
so every text's size must be set by the figure itself.

The module's figures cost a few seconds once (the DP-OWL default view's sweeps at the quick
estimate's 40 repetitions, the CVaR sweep, the Theory measurement), read from the run's results
store when another test computed them; each test then takes milliseconds.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from dpcore_app.ui.common.figures import figure

MIN_PX = 14
MIN_CONTRAST = 4.5
BACKGROUNDS = {"light": "#FFFFFF", "dark": "#0E1117"}
NAMED = {"white": "#ffffff", "black": "#000000"}


def _rgb(colour):
    """(r, g, b) in 0..255 and alpha of a CSS hex or rgb()/rgba() colour."""
    colour = NAMED.get(colour.strip().lower(), colour.strip().lower())
    if colour.startswith("#"):
        h = colour[1:]
        h = "".join(c * 2 for c in h) if len(h) in (3, 4) else h
        parts = [int(h[i : i + 2], 16) for i in range(0, len(h), 2)]
        return parts[:3], (parts[3] / 255 if len(parts) == 4 else 1.0)
    numbers = [float(v) for v in re.findall(r"[\d.]+", colour)]
    if colour.startswith("rgb") and len(numbers) >= 3:
        return numbers[:3], (numbers[3] if len(numbers) == 4 else 1.0)
    raise ValueError(f"a colour this test cannot read: {colour!r}")


def luminance(colour):
    """WCAG 2 relative luminance."""
    (r, g, b), _ = _rgb(colour)

    def linear(c):
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast(a, b):
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_the_contrast_helper_matches_wcag():
    assert contrast("#000", "#fff") == pytest.approx(21.0)
    assert contrast("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)  # the classic just-fail
    assert contrast("rgb(255, 255, 255)", "#ffffff") == pytest.approx(1.0)


def _texts(layout):
    """(where, font) for every text of a layout that must carry its own size."""
    yield "font", layout.get("font", {})
    yield "title", layout.get("title", {}).get("font", {})
    yield "legend", layout.get("legend", {}).get("font", {})
    yield "hoverlabel", layout.get("hoverlabel", {}).get("font", {})
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name):
            yield f"{name} ticks", axis.get("tickfont", {})
            if axis.get("title", {}).get("text"):
                yield f"{name} title", axis["title"].get("font", {})
    for k, note in enumerate(layout.get("annotations", ())):
        if not note.get("text"):  # an arrow
            continue
        yield f"annotation {k} {note.get('text', '')!r}", note.get("font", {})


def _coloured(spec):
    """(where, colour, background) of every font colour set anywhere in the figure."""

    def walk(node, where, bg):
        if isinstance(node, dict):
            bg = node.get("bgcolor", bg) if isinstance(node.get("bgcolor"), str) else bg
            for key, value in node.items():
                if key == "template":  # the theme's own (Streamlit swaps in its colours per theme)
                    continue
                if (
                    key.endswith("font")
                    and isinstance(value, dict)
                    and isinstance(value.get("color"), str)
                ):
                    yield f"{where}.{key}", value["color"], bg
                yield from walk(value, f"{where}.{key}", bg)
        elif isinstance(node, (list, tuple)):
            for k, value in enumerate(node):
                yield from walk(value, f"{where}[{k}]", bg)

    yield from walk(spec.get("layout", {}), "layout", None)
    yield from walk(spec.get("data", []), "data", None)


def problems(fig):
    spec = fig.to_dict()
    found = []
    for where, font in _texts(spec.get("layout", {})):
        size = font.get("size")
        if not isinstance(size, (int, float)) or size < MIN_PX:
            found.append(f"{where}: size {size}")
    for where, colour, bg in _coloured(spec):
        if (
            bg is not None and _rgb(bg)[1] == 1.0
        ):  # an opaque box behind the text: that is its background
            backgrounds = {"own box": bg}
        else:
            backgrounds = BACKGROUNDS
        for theme, back in backgrounds.items():
            if contrast(colour, back) < MIN_CONTRAST:
                found.append(f"{where}: {colour} on {theme} {back}: {contrast(colour, back):.2f}:1")
    return found


# ---- the figures of each page's default view, built as the pages build them --------------------


def owl_figures():
    from dpcore_app.ui.owl import charts, compute, decide, explain
    from dpcore_app.ui.owl import decide_compute as targets

    # The page's defaults (ε = 1, n = 1000 beside 200, 500, 2500, the authors' γ) at the quick
    # estimate's repetitions: the same figures, a fraction of the simulation.
    s = dict(eps=1.0, n=1000, mode="paper", gamma=75, h=0.5, W="auto", prep="public", seed=0)
    sizes, reps = (200, 500, 1000, 2500), compute.QUICK_REPS
    results = compute.sweeps(
        sizes, s["mode"], s["gamma"], s["h"], s["W"], reps, s["seed"], s["prep"]
    )
    runs, _, _ = results[s["n"]]
    summary = compute.stack_summaries(results)
    best = {s["n"]: float(decide.best_reference(s, summary, reps)["accuracy_mean"])}
    target = (80.0, None)
    here = runs.loc[runs.epsilon == s["eps"], "accuracy"]
    nonprivate = runs.loc[np.isinf(runs.epsilon), "accuracy"]
    ex = compute.example_rule(
        s["n"], s["eps"], s["mode"], s["gamma"], s["h"], s["W"], s["seed"], s["prep"]
    )
    names = explain.feature_names(ex.names)
    refs = targets.fixed_rule_accuracy()
    return {
        "dp-owl ε": figure(
            charts.curves_vs_epsilon,
            summary,
            "accuracy",
            sizes,
            1.0,
            refs,
            mode="paper",
            gamma=75,
            best=best,
            reference_ns=(1000,),
            target=target,
        ),
        "dp-owl n": figure(charts.curve_vs_n, summary, "accuracy", 1.0, refs, "non-private"),
        "dp-owl n, one n": figure(
            charts.curve_vs_n, summary[summary.n == 1000], "accuracy", 1.0, refs
        ),
        "dp-owl value": figure(
            charts.curves_vs_epsilon,
            summary,
            "value",
            sizes,
            1.0,
            {"oracle": 7.0, "treat_all": 5.0, "treat_none": 4.9},
            mode="paper",
            gamma=75,
        ),
        "dp-owl spread": figure(
            charts.distribution, here, nonprivate, "accuracy", 1.0, "non-private"
        ),
        "dp-owl coefficients": figure(
            charts.coefficients,
            names,
            ex.nonprivate,
            ex.private,
            1.0,
            None,
            (ex.gamma_ref, ex.gamma),
        ),
        "dp-owl noise": figure(charts.noise_vector, ex.theta_hat, ex.noise, 0.5, names=names),
        "dp-owl γ": charts.gamma_curve(
            pd.DataFrame(
                {
                    "gamma": [1.0, 10.0, 100.0],
                    "accuracy_mean": [60.0, 70.0, 65.0],
                    "accuracy_lo": [55.0, 65.0, 60.0],
                    "accuracy_hi": [65.0, 75.0, 70.0],
                }
            ),
            10.0,
            "accuracy",
            top=100.0,
            paper_value=75.0,
        ),
    }


def cvar_figures():
    from dpcore_app.ui.cvar import charts, compute

    n, tau, eps, bound, seed = 2000, 0.05, 1.0, 1.0, 0
    summary = compute.scalar_summary("uniform", bound, compute.workload(200).reps, seed)
    study = compute.finite_class(n, tau, 31, bound, seed)
    res, _, _ = compute.rule_tail(n, tau, 2.0, eps, seed)
    figs = {
        f"cvar error against {x}": figure(
            charts.error_curves,
            compute.curve(summary, x, n, tau, eps),
            x,
            {"epsilon": eps, "n": n, "tau": tau, "eps_n_tau": None}[x],
            bound,
            eps,
        )
        for x in ("epsilon", "n", "tau", "eps_n_tau")
    }
    figs["cvar selection"] = figure(
        charts.selection_probabilities, study, list(study.epsilons).index(eps)
    )
    figs["cvar class excess"] = figure(charts.class_excess, study, eps)
    figs["cvar rule tail"] = charts.rule_tail(res, 2.0, eps)
    return figs


def bounds_figures():
    from dpcore_app.ui.bounds import compute

    n, eps, h, W, C, rho, seed, G, form, d, tau = (
        500,
        1.0,
        0.5,
        30,
        0.0,
        0.05,
        0,
        0.0,
        "re-derived",
        5,
        0.05,
    )
    gamma = compute.gamma_used("paper", 75, eps, n)
    m = compute.measure(n, eps, gamma, h, W, C, rho, seed)
    best = compute.minimisers(n, eps, gamma, h, W, C, rho, m.norms)
    figs = {}
    for over, current in (("gamma", gamma), ("h", h)):
        curve = compute.terms_curve(
            n, eps, gamma, h, W, C, rho, m.norms, G, over, reach=best[form][over]
        )
        figs[f"theory against {over}"] = compute.figure(
            "bound_terms",
            curve,
            m.curve(over, form),
            over,
            form,
            current,
            best[form][over],
            rho,
            best["paper"] if over == "gamma" else None,
        )
    figs["theory sample size"] = compute.figure(
        "sample_size", compute.sample_sizes(1.0, W, C, rho, m.theta0_norm), eps, 1.0
    )
    ns, taus, regime = compute.phase_grid(eps, d)
    figs["theory phase"] = compute.figure("phase_diagram", ns, taus, regime, n, tau, eps, d)
    figs["theory rates"] = compute.figure(
        "cvar_rates",
        compute.cvar_rates(tau, eps, d),
        compute.cvar_measured(tau, eps, seed),
        tau,
        eps,
    )
    return figs


def overview_figures():
    from dpcore_app.ui.overview import charts

    rng = np.random.default_rng(0)
    return {"overview count": charts.noisy_count(120, 120 + rng.laplace(0, 1, 2000), 1.0)}


@pytest.fixture(scope="module")
def default_figures():
    return {**overview_figures(), **owl_figures(), **cvar_figures(), **bounds_figures()}


def test_every_default_chart_text_is_large_and_readable_in_both_themes(default_figures):
    found = {name: p for name, fig in default_figures.items() if (p := problems(fig))}
    assert not found, "\n".join(f"{name}: {'; '.join(p)}" for name, p in found.items())


def test_an_axis_with_one_point_keeps_a_readable_range(default_figures):
    """One n on the n axis: the range spans the point with room, neither a point nor decades."""
    x = default_figures["dp-owl n, one n"].to_dict()["layout"]["xaxis"]
    lo, hi = x["autorangeoptions"]["include"]
    assert lo < 1000 < hi and 1.5 <= hi / lo <= 10 and math.isfinite(hi)
