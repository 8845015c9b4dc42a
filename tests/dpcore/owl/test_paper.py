import numpy as np
import pytest

from dpcore.owl.paper import PAPER_GAMMA, paper_gamma, paper_outcome_shift, resolve_gamma


def test_data_min_shift_is_the_authors():
    B = np.array([[-2.0, 1.0, 3.0], [0.5, 1.0, 2.0]])
    np.testing.assert_allclose(paper_outcome_shift(B), [2.001, 0.0])
    assert (B + paper_outcome_shift(B)[:, None]).min() == pytest.approx(0.001)


SPEC_TABLE = """
0.1 | 50 | 75 | 75 | 110 | 110 | 175 | 225
0.5 | 90 | 150 | 145 | 125 | 125 | 225 | 250
1 | 150 | 115 | 75 | 75 | 125 | 225 | 250
2 | 105 | 55 | 100 | 150 | 125 | 225 | 300
5 | 30 | 60 | 50 | 75 | 75 | 125 | 225
20 | 20 | 30 | 50 | 60 | 60 | 100 | 100
50 | 10 | 30 | 30 | 30 | 30 | 35 | 40
150 | 10 | 15 | 15 | 15 | 30 | 20 | 25
inf | 2 | 1 | 1 | 1 | 2 | 2 | 1
"""


def test_every_cell_of_the_paper_gamma_table():
    """The authors' table, transcribed again from spec §7, cell by cell."""
    ns = (200, 500, 800, 1000, 1500, 2000, 2500)
    for line in SPEC_TABLE.strip().splitlines():
        eps, *gammas = (float(v) for v in line.split("|"))
        for n, g in zip(ns, gammas):
            assert PAPER_GAMMA[(eps, n)] == g
            assert paper_gamma(eps, n) == g
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        paper_gamma(-1, 200)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        paper_gamma(0, 200)


def test_paper_gamma_table_and_lookup():
    assert paper_gamma(1, 1000) == 75 and paper_gamma(np.inf, 200) == 2
    assert paper_gamma(0.9, 1100) == PAPER_GAMMA[(1, 1000)]
    assert paper_gamma(1000, 500) == PAPER_GAMMA[(150, 500)]  # large finite eps: the eps=150 row
    assert len(PAPER_GAMMA) == 9 * 7


def test_resolve_gamma_is_the_one_place_that_picks_gamma():
    assert resolve_gamma("paper", 1.0, 1000) == paper_gamma(1.0, 1000) == 75.0
    assert resolve_gamma("paper", np.inf, 200) == 2.0
    assert resolve_gamma(40, 1.0, 1000) == 40.0 and resolve_gamma(40.0, np.inf, 5) == 40.0
    with pytest.raises(ValueError, match="gamma must be a positive number or 'paper'"):
        resolve_gamma("tuned", 1.0, 1000)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        resolve_gamma(0.0, 1.0, 1000)
