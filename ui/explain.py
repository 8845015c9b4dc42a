"""Plain-language sentences built from the numbers on screen."""

from __future__ import annotations

import math

from dpcore import attacker_posterior_bound


def eps_text(eps):
    return "no privacy (non-private)" if math.isinf(eps) else f"ε = {eps:g}"


def attacker_sentence(eps, what="the rule", prior=0.5):
    """What one ε-DP release (``what``) can do to an attacker's belief about one person."""
    if math.isinf(eps):
        return (f"Without privacy there is no limit on what {what} can reveal about any one "
                "patient.")
    post = float(attacker_posterior_bound(prior, eps))
    shown = f"{100 * post:.1f}%" if post < 0.9995 else "almost 100%"
    return (f"An attacker who was {100 * prior:.0f}% sure of a fact about one patient (say, that "
            f"they were in the trial with a given outcome) is at most {shown} sure after seeing "
            f"{what} released at ε = {eps:g}, whatever else they know.")


def out_of_100(percent):
    return f"{round(percent):.0f} of 100"


def owl_verdict(eps, n, accuracy, accuracy_nonprivate, lo, hi):
    """The page's first sentence: the private rule against none, out of 100 patients."""
    if math.isinf(eps):
        return (f"Without privacy, a rule learned from {n} patients picks the better treatment "
                f"for {out_of_100(accuracy)} new patients.")
    sentence = (f"At ε = {eps:g} and {n} patients, the private rule picks the better treatment "
                f"for {out_of_100(accuracy)} new patients, against "
                f"{out_of_100(accuracy_nonprivate)} without privacy")
    if lo <= 50 <= hi:
        return sentence + ": no better than a coin flip."
    return sentence + "."


def gap_text(total, noise, regularization, unit="pts", digits=1):
    """The gap to the best non-private rule, split into its two causes."""
    f = f"{{:+.{digits}f}}"
    if abs(regularization) < 0.5 * 10**-digits:
        return f"{f.format(total)} {unit}, all from noise"
    return (f"{f.format(total)} {unit}: {f.format(noise)} from noise, "
            f"{f.format(regularization)} from the larger γ")


def coverage(prep, W, bounds, clipped_share):
    """What the privacy guarantee covers in this preprocessing mode (a caption)."""
    unit = ("Unit of privacy: one patient (one row); neighbouring trials differ by replacing "
            "one patient.")
    if prep == "paper":
        return (f"{unit} **Paper's preprocessing: not covered by the guarantee.** As in the "
                "authors' code, each training set's outcomes are shifted by their own minimum "
                f"and weights are capped at W = {W:g}; that shift reads the data, so these curves "
                "reproduce the paper rather than a private release.")
    lo, hi = bounds
    clipped = ("no weight is clipped" if clipped_share == 0 else
               f"{100 * clipped_share:.1f}% of the weights are clipped at W (the guarantee still "
               "holds; clipped patients count for less)")
    return (f"{unit} **Pure ε-DP (δ = 0) for the released coefficients.** Outcomes are clipped to "
            f"the public range [{lo:g}, {hi:g}] fixed before the data, weights are benefit / "
            f"propensity with W = {W:g}, and {clipped}.")


def eps_curve_caption(metric):
    if metric == "concordance":
        return ("Agreement with the non-private rule at the same n (100% means the same "
                "recommendations); the dash-dot line is a coin flip.")
    return ("Each band is one trial size. Grey dotted: the best non-private rule. Grey dashed "
            "(paper-tuned γ only): the non-private rule at the γ each ε uses. The band's distance "
            "to the dashed line is the cost of the noise; dashed to dotted, the cost of the larger γ.")


def n_curve_caption(eps):
    if math.isinf(eps):
        return "Without noise, more patients give a rule closer to the best one."
    return ("At a fixed ε the noise, of typical length dΔ/ε with Δ = 2W/γ, does not grow with n "
            "but the signal does: the coefficients grow with n and the same noise flips fewer "
            "recommendations.")


def agreement_text(agree):
    p = f"p = {agree['p_value']:.1e}" if agree["p_value"] >= 1e-300 else "p below 10⁻³⁰⁰"
    return (f"On 5000 new patients this example's private rule agrees with the non-private one "
            f"for {100 * agree['concordance']:.1f}% (Cohen's κ = {agree['kappa']:.2f}; Fisher's "
            f"exact one-sided test of agreement beyond chance: {p}).")


def noise_caption(d, sensitivity, radius):
    return (f"The exact minimiser θ̂ moves by noise of length Gamma(d = {d}, rate ε/Δ), Δ = "
            f"{sensitivity:.3g}, in a uniform direction; the picture shows its part on two of the "
            f"{d} coordinates, and the circle that part's mean length, {radius:.3g}.")


def tuning_caption(res, reps, n, variant, n0):
    """What Algorithm 2's curve says, with its uncertainty."""
    flat = (f" The curve is flat here: {100 * res.near_best:.0f}% of the γ grid is within one "
            "standard error of the best, so many γ are about as good." if res.near_best >= 0.25 else "")
    return (f"Mean validation value of {reps} private fits per γ, each on n = {n} rows drawn from D0 "
            f"({variant}, n0 = {n0}), with 95% bands. The pick is the largest γ within one standard "
            f"error of the best mean (γ = {res.top_gamma:g}): larger γ means less noise, and the data "
            f"cannot tell these apart.{flat}")


GLOSSARY = """
- **Accuracy**: out of 100 new patients, for how many the rule recommends the treatment that
  is truly better for them (known here because the trial is simulated).
- **Value**: the average outcome if every new patient were treated as the rule says (higher is
  better), estimated from the trial by inverse-probability weighting.
- **Agreement**: out of 100 new patients, for how many the private rule recommends the same
  treatment as the rule learned without privacy.
- **ε (privacy budget)**: how much one patient's data may change what is released. Smaller
  means more noise and stronger protection; at ε = 1 no release can make any outcome more than
  e ≈ 2.7 times as likely because of one patient.
- **γ (regularization)**: how strongly the rule is pulled towards zero. A larger γ makes the
  rule less sensitive to any one patient, so less noise is needed, but it also blurs the rule.
"""

OWL_INTRO = (
    "**How much worse does a treatment rule get when it is learned with differential privacy?** "
    "A randomized trial of two treatments is simulated as in the DP-wERM paper: four patient "
    "features and a true best treatment that depends on them. The rule *treat when intercept + "
    "Σ coef·x > 0* is learned by outcome weighted learning and released with ε-differential "
    "privacy by adding noise to its coefficients. Every number is a Monte-Carlo mean over "
    "repeated trials."
)

OWL_FORMULAS = (
    (r"\hat\theta = \arg\min_\theta \sum_{i=1}^n \frac{B_i - b_{lo}}{\pi(A_i)}\,"
     r"\ell_h\big(A_i\,\theta^\top \tilde x_i\big) + \frac{\gamma}{2}\lVert\theta\rVert^2",
     "The rule: a weighted classification of the treatment received, each patient weighted by "
     "their benefit over the chance of the arm they got (W bounds these weights)."),
    (r"\Delta = \frac{C + 2W}{\gamma}",
     "How far replacing one patient can move the exact rule (C = 0 here: the randomization "
     "probabilities are known); the code adds a 2·10⁻⁶/γ solver slack."),
    (r"\theta^* = \hat\theta + b,\quad p(b) \propto e^{-\varepsilon \lVert b\rVert / \Delta}",
     "The release: noise whose length is Gamma(d, ε/Δ) in a uniform direction, so its mean "
     "length is dΔ/ε."),
)

PRACTICE = (
    "For scale: the US Census Bureau's 2020 redistricting data used ε = 17.14 for the persons "
    "file (US Census Bureau, 2021 privacy-loss budget allocation); Apple reports ε from 2 to 8 "
    "per day for the features it collects (Apple, *Differential Privacy Overview*); in the DP "
    "literature ε ≤ 1 is usually called strong privacy (Dwork and Roth, 2014)."
)


def clinical_summary(eps, n, concordance, value_private, value_nonprivate, scale):
    """The private rule against the non-private rule, out of 100 patients, in outcome units."""
    if math.isinf(eps):
        return (f"Without privacy, a rule learned from {n} patients reaches an expected outcome of "
                f"{value_nonprivate:.2f} points ({scale}).")
    same = int(round(concordance))
    change = value_private - value_nonprivate
    direction = "drops" if change < 0 else "rises" if change > 0 else "stays"
    return (f"At ε = {eps:g}, with {n} patients to learn from, out of 100 new patients the private "
            f"rule recommends the same treatment as the non-private rule for about {same}; the "
            f"expected outcome under the rule {direction} from {value_nonprivate:.2f} to "
            f"{value_private:.2f} points ({scale}).")


# --------------------------------------------------------------------------------------------
# Private CVaR page


def _share(tau):
    return f"{100 * tau:g}%"


def _records(count):
    count = round(count)
    return f"{count} patient" + ("" if count == 1 else "s")


def cvar_verdict(n, tau, eps, total, statistical, bound):
    """How far the private tail mean is off at this setting, against the sampling error."""
    k = round(n * tau)
    tail = (f"all {n} patients count (the plain mean)" if tau >= 1 else
            f"only {_records(k)} {'forms' if k == 1 else 'form'} the tail")
    scale = f"on a loss scale from 0 to {bound:g}"
    if math.isinf(eps):
        return (f"With {n} patients and τ = {_share(tau)}, {tail}; without privacy the estimate "
                f"of their mean loss is off by about {total:.2g} {scale}, all of it sampling error.")
    return (f"With {n} patients and τ = {_share(tau)}, {tail}; at ε = {eps:g} the private "
            f"estimate of their mean loss is off by about {total:.2g} {scale}; the sampling "
            f"error alone is {statistical:.2g}.")


def cvar_regime_sentence(regime, n, tau, eps, privacy, statistical):
    """Which term of the worst-case rate B·min{1, 1/√(nτ) + 1/(εnτ)} governs, with its
    numbers, then the measured split on the current loss law (which can differ)."""
    m = n * tau
    stat = 1.0 / math.sqrt(m)
    if regime == "trivial":
        priv = 0.0 if math.isinf(eps) else 1.0 / (eps * m)
        text = (f"Worst case over all loss laws in [0, B]: 1/√(nτ) + 1/(εnτ) = {stat + priv:.2g} ≥ 1, "
                "so the rate is B itself and no estimator is guaranteed to do better than a fixed "
                "guess by more than a constant factor.")
    elif regime == "privacy-dominated":
        text = (f"Worst case over all loss laws in [0, B]: εnτ = {eps * m:.3g} is below √(nτ) = "
                f"{math.sqrt(m):.3g}, so the privacy term 1/(εnτ) outweighs the sampling term 1/√(nτ).")
    elif math.isinf(eps):
        text = f"Without privacy only the sampling term 1/√(nτ) = {stat:.2g} of the rate remains."
    else:
        text = (f"Worst case over all loss laws in [0, B]: εnτ = {eps * m:.3g} is at least √(nτ) = "
                f"{math.sqrt(m):.3g}, so the sampling term 1/√(nτ) outweighs the privacy term 1/(εnτ).")
    if math.isinf(eps):
        return text
    larger = "privacy" if privacy > statistical else "sampling"
    return (text + f" Measured on this loss law: privacy part {privacy:.2g}, sampling part "
            f"{statistical:.2g}; the {larger} part is the larger.")


def rule_tail_sentence(res, eps_rule, eps_cvar, spent):
    """The DP-OWL bridge in words: the worst-off patients under each rule and the budget."""
    who = f"the worst-off {_share(res.tau)} of new patients"
    release = ("released without privacy" if math.isinf(eps_cvar)
               else f"released at ε₂ = {eps_cvar:g} as {res.released:.2f}; at least 95% of such "
                  f"releases land within ±{res.halfwidth:.2f} of the exact value")
    change = res.private_rule - res.nonprivate_rule
    compared = ("the same to two decimals" if abs(change) < 0.005 else
                f"{abs(change):.2f} points {'worse' if change < 0 else 'better'}")
    budget = ("Privacy spent: not private (a release with ε = non-private has no guarantee)."
              if math.isinf(spent) else
              f"Privacy spent: ε₁ + ε₂ = {eps_rule:g} + {eps_cvar:g} = {spent:g} by basic "
              "composition for a patient in both data sets; a patient in only one is covered "
              "by that release's ε.")
    return (f"Under the private rule (ε₁ = {eps_rule:g}) {who} have a mean outcome of "
            f"{res.private_rule:.2f} points ({release}); under the non-private rule, "
            f"{res.nonprivate_rule:.2f}: {compared}. {budget}")


CVAR_CAPTIONS = {
    "epsilon": "The privacy part falls like 1/ε (flatter where the clip to [0, B] caps it); once it is "
               "below the statistical part, the total settles on the statistical part, which no budget "
               "removes. Bands: 95% Monte-Carlo intervals.",
    "n": "In the rate the sampling term falls like 1/√n and the privacy term like 1/n: with more "
         "patients, privacy becomes cheap first.",
    "tau": "A smaller τ leaves fewer records nτ in the tail: both terms of the rate grow as τ shrinks.",
    "eps_n_tau": "Privacy acts on εnτ, the private tail sample size, not on εn: every τ follows B/(εnτ) "
                 "once the noise is small against the tail mean's distance to 0 and B. Before that the "
                 "clip to [0, B] pulls the curves down (at once for the hard two-point law, whose tail "
                 "mean is B/2).",
}


def adaptive_sentence(laplace, adaptive, se_laplace, se_adaptive):
    """The instance-adaptive variant against the Laplace plug-in on the same data."""
    half = 2.0 * math.hypot(se_laplace, se_adaptive)
    verdict = ("helps here" if adaptive < laplace - half else "hurts here" if adaptive > laplace + half
               else "is on par here (within twice the Monte-Carlo standard error)")
    return (f"The instance-adaptive variant spends half of ε on two private quantiles, clips the "
            f"data to them and spends the rest on the Laplace release. On the same simulated data "
            f"it errs by {adaptive:.2g} on average against {laplace:.2g} for the plug-in: it "
            f"{verdict}. It cannot beat the worst case: try the hard two-point law.")
# Theory bounds page


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
# "Your data": a released rule in words (plain text: callers escape it for markdown or HTML)


def rule_sentence(release):
    """The released rule as a sentence in the covariates' original units."""
    terms = " ".join(f"{'−' if c < 0 else '+'} {abs(c):.4g}·{name}"
                     for name, c in zip(release.names, release.coef))
    return (f"Treat with '{release.treated}' when {release.intercept:.4g} {terms} > 0; otherwise "
            f"give '{release.control}'. Each covariate is first clipped to its public bounds; a "
            "one-hot column 'col=level' is 1 for patients with that level and 0 otherwise.")


def release_statement(release):
    """What was released, under which ε, and what the guarantee covers."""
    if not release.private:
        return (f"The rule's coefficients were released with ε = {release.epsilon:g} noise, but "
                "some bounds were read from the data, so there is NO differential-privacy "
                "guarantee: treat this rule as if it were computed without privacy.")
    return (f"Only the rule's {len(release.coef) + 1} coefficients were released, with pure "
            f"ε-differential privacy at ε = {release.epsilon:g} (δ = 0): replacing any one "
            f"patient's row among the {release.n} changes the chance of any released rule by at "
            f"most a factor e^{release.epsilon:g} = {math.exp(min(release.epsilon, 700)):.3g}. "
            "The bounds, γ, W and C are public settings chosen without looking at the data. The "
            "guarantee does not cover floating-point effects of the noise sampler, settings tuned "
            "on the same data, or side channels.")


def upload_verdict(stage, n=None, eps=None):
    """The page's opening verdict for where the user is."""
    if stage == "none":
        return "No trial yet: pick a demo file or upload a CSV to begin."
    if stage == "error":
        return "The file could not be read as a trial yet: the message below says what to change."
    if stage == "bounds":
        return f"{n} patients read. Enter the public bounds below before a rule can be released."
    return (f"{n} patients read. A rule can be released at ε = {eps:g}: it will spend "
            f"ε = {eps:g} of this session's privacy budget.")


def released_verdict(release, spent):
    """The page's verdict once a rule is out: what was released and what the session spent."""
    if not release.private:
        return (f"Released a rule at ε = {release.epsilon:g} WITHOUT a privacy guarantee (bounds "
                f"read from the data). This session has recorded ε = {spent:g} in total.")
    return (f"Released a private treatment rule at ε = {release.epsilon:g}: a patient's data "
            f"moves the chance of this rule by at most a factor "
            f"{math.exp(min(release.epsilon, 700)):.3g}. This session has spent ε = {spent:g} "
            "in total.")
