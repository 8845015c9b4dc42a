"""The DP-OWL page says only what its numbers support, in every state a user can reach."""

import math
import re

import numpy as np
import pytest

from dpcore.owl.experiments import owl_monte_carlo
from ui.compute.owl import PUBLIC_OUTCOME, TEST_SIZE
from ui.grids import EPS_OPTIONS

PAGE = "app_pages/dp_owl.py"
FAST = {"reps": "40", "compare": ["200"]}


def everything(at):
    """Every piece of text the page shows, as a user reads it."""
    parts = [e.value for kind in ("markdown", "caption", "info", "success", "warning", "error")
             for e in getattr(at, kind)]
    parts += [f"{m.label} {m.value} {m.delta or ''}" for m in at.metric]
    return re.sub(r"\\(.)", r"\1", " ".join(str(p) for p in parts))


@pytest.mark.parametrize("params", [
    {},
    {"eps": "non-private"},
    {"eps": "0.05", "metric": "value"},
    {"gamma_mode": "fixed", "gamma": "30"},
    {"prep": "authors' shift", "metric": "agreement"},
    {"eps": "0.05", "n": "100", "W": "10", "metric": "value", "scale": "paper scale"},
])
def test_states_render_without_error(open_fresh, params):
    at = open_fresh(PAGE, **{**FAST, **params})
    assert not at.error, [e.value for e in at.error]
    assert not at.warning
    assert at.success[0].value.startswith(("At ε =", "Without privacy"))


def test_the_nonprivate_state_reads_as_such(open_fresh):
    at = open_fresh(PAGE, eps="non-private", **FAST)
    text = everything(at)
    for absent in ("ε = inf", "+0.0", "+0.00", "< 1e-300", "noise radius", "Noise radius"):
        assert absent not in text
    assert all(m.delta in (None, "") for m in at.metric)
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert not any("noise" in k for k in keys)
    assert "Without privacy, a rule learned from 1000 patients" in at.success[0].value


def test_the_cards_split_the_gap_exactly_as_the_engine_does(open_fresh):
    at = open_fresh(PAGE, eps="0.5", n="500", **{"reps": "40", "compare": ["200"]})
    engine = owl_monte_carlo([500], EPS_OPTIONS, gamma="paper", reps=40, test_size=TEST_SIZE, seed=0,
                             outcome=PUBLIC_OUTCOME, weight_bound=48.0).summary.set_index("epsilon")
    here, best = engine.loc[0.5], engine.loc[math.inf]
    total = here.accuracy_mean - best.accuracy_mean
    noise = here.accuracy_mean - here.accuracy_same_gamma_mean
    card = at.metric[0]
    numbers = [float(x) for x in re.findall(r"[+-]\d+\.\d", card.delta)]
    assert numbers == pytest.approx([round(total, 1), round(noise, 1), round(total - noise, 1)], abs=0.051)
    assert numbers[1] + numbers[2] == pytest.approx(numbers[0], abs=0.11)  # rounding only
    assert card.value == f"{here.accuracy_mean:.1f}%"
    assert "from noise" in card.delta and "from the larger γ" in card.delta
    assert f"accuracy {here.accuracy_lo:.1f}–{here.accuracy_hi:.1f}%" in everything(at)  # the card's 95% CI


def test_the_verdict_counts_patients_out_of_100(open_fresh):
    at = open_fresh(PAGE, **FAST)
    verdict = at.success[0].value
    private, nonprivate = map(int, re.findall(r"(\d+) of 100", verdict))
    assert f"{private}" == at.metric[0].value.split(".")[0] or abs(private - float(at.metric[0].value[:-1])) <= 0.5
    assert nonprivate > private


def test_a_coin_flip_is_called_a_coin_flip(open_fresh):
    at = open_fresh(PAGE, eps="0.05", n="100", reps="40", compare=["200"])
    assert "no better than a coin flip" in at.success[0].value


def test_the_paper_preprocessing_is_labelled_not_covered(open_fresh):
    public = everything(open_fresh(PAGE, **FAST))
    assert "Pure ε-DP (δ = 0)" in public and "no weight is clipped" in public
    paper = everything(open_fresh(PAGE, prep="authors' shift", **FAST))
    assert "not covered by the guarantee" in paper and "Pure ε-DP" not in paper


def test_a_smaller_weight_bound_says_how_many_weights_it_clips(open_fresh):
    text = everything(open_fresh(PAGE, W="10", **FAST))
    share = float(re.search(r"(\d+\.\d)% of the weights are clipped", text).group(1))
    assert 0 < share < 100


def test_charts_show_the_references(open_fresh):
    import json

    at = open_fresh(PAGE, **FAST)
    fig = json.loads(next(c for c in at.get("plotly_chart") if "vs_eps" in c.proto.id).proto.spec)
    names = {t.get("name") for t in fig["data"]}
    assert {"non-private (best γ)", "non-private at the same γ"} <= names
    texts = [a.get("text", "") for a in fig["layout"].get("annotations", [])]
    assert any("coin flip" in t for t in texts)
    fixed = open_fresh(PAGE, gamma_mode="fixed", **FAST)
    fig = json.loads(next(c for c in fixed.get("plotly_chart") if "vs_eps" in c.proto.id).proto.spec)
    assert "non-private at the same γ" not in {t.get("name") for t in fig["data"]}  # it is the best


def test_downloads_and_the_scale_control_only_when_it_matters(open_fresh):
    at = open_fresh(PAGE, **FAST)
    assert len(at.get("download_button")) >= 3
    assert not [r for r in at.radio if r.key == "scale"]  # accuracy shown: no outcome scale
    value = open_fresh(PAGE, metric="value", **FAST)
    assert [r for r in value.radio if r.key == "scale"]


def test_algorithm_2_confirms_the_change(open_fresh):
    at = open_fresh(PAGE, **FAST)
    at.button(key="run_tuning").click().run()
    caption = " ".join(c.value for c in at.caption)
    assert "largest γ within one standard error" in caption
    best = int(at.button(key="use_gamma").label.split("= ")[1].split(" ")[0])
    at.button(key="use_gamma").click().run()
    assert at.session_state["gamma_mode"] == "free" and at.slider(key="gamma").value == best
    assert any(f"γ = {best}" in t.value for t in at.toast)
    assert np.isfinite(best)


@pytest.mark.parametrize("eps,widens", [("0.5", True), ("1000", False)])
def test_the_spread_caption_matches_the_spread_drawn(open_fresh, eps, widens):
    import json

    at = open_fresh(PAGE, eps=eps, **FAST)
    fig = json.loads(next(c for c in at.get("plotly_chart") if "dist" in c.proto.id).proto.spec)
    private, nonprivate = (np.std(values(trace["x"]), ddof=1) for trace in fig["data"])
    text = everything(at)
    assert ("privacy widens the spread" in text) == widens == (private > 1.2 * nonprivate)


def values(x):
    """A plotly JSON array: a list, or numpy's base64 encoding."""
    import base64

    if isinstance(x, dict):
        return np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
    return np.asarray(x, dtype=float)
