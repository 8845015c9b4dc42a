"""Sentences of the theory bounds page."""

from __future__ import annotations

import math


def _times(ratio):
    if ratio >= 1e6:
        return f"{ratio:.1e}"
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.1f}"


def bound_verdict(eps, terms, q_measured, rho):
    """Which term of Theorem 10 (re-derived) rules at this setting, and what the measurement says.

    ``terms`` holds T1, T2, T3, G and total of the re-derived form; ``q_measured`` is the
    measured (1 - rho) quantile of the excess risk.
    """
    total = terms["total"]
    share = {k: terms[k] / total for k in ("T1", "T2", "T3", "G")} if total > 0 else {}
    names = {"T1": "the regularization term", "T2": "the privacy-noise term",
             "T3": "the Huber-to-hinge term", "G": "the generalization term"}
    top = max(share, key=share.get) if share else "T1"
    if math.isinf(eps):
        head = (f"Without privacy there is no noise term: the bound (re-derived form) is {total:.3g}, of which "
                f"{names[top]} is {100 * share.get(top, 0):.0f}%.")
    else:
        rules = "" if top == "T2" else f", and {names[top]} is the largest"
        head = (f"At these settings the privacy-noise term is {100 * share['T2']:.0f}% of the "
                f"bound (re-derived form){rules}; doubling n, with γ doubled so that λ = γ/n stays, would cut the "
                "noise term to a quarter.")
    if q_measured <= 0:
        tail = (f"In {100 * (1 - rho):.0f}% of simulated releases the private rule's weighted "
                "error was no worse than the comparison rule's.")
    else:
        tail = (f"The bound promises that the private rule's weighted error exceeds the best "
                f"comparable rule's by at most {total:.3g} with probability {1 - rho:.0%}; in "
                f"simulation that excess stayed below {q_measured:.3g} in {1 - rho:.0%} of "
                f"releases, so the bound is {_times(total / q_measured)} times the measured value.")
    return head + " " + tail


def coverage_sentence(form, cov, rho):
    """("holds" | "unclear" | "violated", sentence): how often the measured excess stayed within
    one form of the bound, against the theorem's 1 - rho, judged by the 95% interval."""
    share, lo, hi, m = 100 * cov["share"], 100 * cov["lo"], 100 * cov["hi"], cov["draws"]
    target = 100 * (1 - rho)
    text = (f"The {form} bound held in {share:.1f}% of {m} simulated releases (95% CI "
            f"{lo:.1f}–{hi:.1f}%); the theorem promises at least {target:.0f}%.")
    if hi < target:
        return "violated", text + f" The {form} bound is violated by measurement at these settings."
    if share < target:
        return "unclear", text + " Below the promise, but within Monte-Carlo error."
    return "holds", text


def rate_ratio_sentence(lo, hi):
    """The measured CVaR error over the scalar rate, and whether that is one order."""
    text = f"Measured error / scalar rate stays between {lo:.2g} and {hi:.2g} across n"
    if 0.2 <= lo and hi <= 2.0:
        return text + ": the same order, as Theorem 3.4 says."
    return text + ": the rate's constants matter at these settings."

WERM_FORMULAS = (
    (r"\begin{aligned}\lambda &= \gamma / n\\ \hat L_0(\theta) &= \tfrac1n \textstyle\sum_i w_i \max(0,\, 1 - y_i x_i^\top\theta)\end{aligned}",
     "Convention: the code minimises Σ wᵢ l + (γ/2)‖θ‖², so λ = γ/n (the paper's text writes "
     "λ = 2γ/n); the bound is on the weighted hinge error L̂₀, in the scaled space ‖x‖ ≤ 1."),
    (r"\begin{aligned}&\hat L_0(\theta^*) - \hat L_0(\theta_0) \le T_1 + T_2 + T_3\\ &\text{with probability at least } 1-\rho\end{aligned}",
     "Theorem 10: for any comparison rule θ₀, the released rule's error exceeds θ₀'s by at most "
     "three terms, except with probability ρ over the noise."),
    (r"T_1 = \frac{\lambda}{2}\lVert\theta_0\rVert^2",
     "Regularization: the price of shrinking the rule; it grows with γ."),
    (r"\begin{aligned}T_2^{\text{printed}} &= \frac{\big[(\lambda + \frac{W}{2h})(C+2W)\,a_p(\rho)\big]^2}{(2n\lambda\varepsilon)^2}\\"
     r"a_p(\rho) &= \sqrt{p + 2\sqrt{p\log(1/\rho)} + \log(1/\rho)}\end{aligned}",
     "Privacy noise as the paper prints it: it squares the smoothness λ + W/(2h) and uses a "
     "Gaussian-norm quantile a_p, not the Gamma radius the mechanism draws."),
    (r"\begin{aligned}T_2^{\text{re-derived}} &= \frac{(\lambda + \frac{W}{2h})\,\big[(C+2W)\,r_\rho\big]^2}{2(n\lambda\varepsilon)^2}\\"
     r"r_\rho &= (1-\rho)\text{ quantile of Gamma}(d, 1)\end{aligned}",
     "Privacy noise re-derived from the smoothness of the objective and the noise radius "
     "(C+2W) r_ρ/(nλε) that Algorithm 1 exceeds only with probability ρ."),
    (r"T_3 = \frac{W h}{4}",
     "Huber-to-hinge: the smoothed loss exceeds the hinge by at most h/4 per unit of weight."),
    (r"\begin{aligned}&L_0(\theta^*) - L_0(\theta_0)\\ &\le T_1 + T_2 + T_3 + 2\,G_{n,h}(\delta_0)\end{aligned}",
     "Theorem 11: on new patients, add twice a uniform deviation G that the theorem leaves to "
     "you (set it under More settings)."),
    (r"\Delta = \frac{C + 2W}{\gamma}\ \text{ against }\ \frac{2}{\gamma}",
     "Sensitivity: weights up to W make one patient move the rule W times as far as in "
     "unweighted ERM; the release adds a solver slack 2·10⁻⁶/γ."),
)

SAMPLE_SIZE_FORMULA = (
    r"\begin{aligned}n &\gtrsim \max\{n_{\text{stat}},\ n_{\text{priv}},\ n_{\text{smooth}}\}\\"
    r"n_{\text{stat}} &= \frac{W^2\lVert\theta_0\rVert^2}{\alpha^2}\\"
    r"n_{\text{priv}} &= \frac{(C+2W)\,p\log(p/\delta)\,\lVert\theta_0\rVert}{\varepsilon\alpha}\\"
    r"n_{\text{smooth}} &= \frac{\sqrt{W/h}\,\lVert\theta_0\rVert\,(C+2W)\,p\log(p/\delta)}{\varepsilon\alpha^{3/2}}\end{aligned}",
    "Corollary 12: the patients needed for excess risk α, up to constants; h = α/W and δ = ρ here.")

CVAR_FORMULAS = (
    (r"\text{scalar: } B\min\Big\{1,\ \frac{1}{\sqrt{n\tau}} + \frac{1}{\varepsilon n\tau}\Big\}",
     "Private CVaR of a bounded loss: the tail holds nτ records, and privacy acts on εnτ of them."),
    (r"\text{finite class: } B\min\Big\{1,\ \sqrt{\frac{\log 2M}{n\tau}} + \frac{\log 2M}{\varepsilon n\tau}\Big\}",
     "Choosing the best of M models: both parts grow with log 2M (drawn for M = 10)."),
    (r"\begin{aligned}&\text{convex lower: } R_0\min\Big\{1,\ \frac{1}{\sqrt{n\tau}} + \frac{\sqrt d}{\varepsilon n\tau}\Big\}\\"
     r"&\text{nontrivial only when } \varepsilon n\tau \gg \sqrt d\end{aligned}",
     "Learning a d-dimensional model: below εnτ ≈ √d no private learner beats a constant."),
)


def _num(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.2g}"


def sample_size_caption(epsilon, regime):
    """Which of Corollary 12's terms rules over which range of ε, read off the curve."""
    parts, start = [], 0
    for i in range(1, len(regime) + 1):
        if i == len(regime) or regime[i] != regime[start]:
            lo, hi = epsilon[start], epsilon[i - 1]
            parts.append(f"the {regime[start]} term for ε from {_num(lo)} to {_num(hi)}")
            start = i
    return "Shaded: the term that rules, " + "; ".join(parts) + "."
