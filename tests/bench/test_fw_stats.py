"""The statistics module reproduces Frandi et al.'s Table 5-6 tests from their Tables 2-3."""

import numpy as np
import pytest

from optframe.bench.stats import friedman_iman_davenport, wilcoxon_signed_rank
from optframe.bench.suites import fw
from optframe.data import Dataset
from optframe.errors import DataError
from optframe.multiclass import one_vs_one


def test_paper_time_statistics():
    """I-14: W = 17 / 20 / 159 with p = 3.085e-06 / 5.528e-06 / 0.6893, F = 14.858."""
    cvm, fw_t, mfw = (np.array(fw.PAPER_TIMES[m]) for m in ("cvm", "fw", "mfw"))
    assert len(cvm) == len(fw.PAPER_SETS) == 26
    a = wilcoxon_signed_rank(fw_t, cvm, "less")
    b = wilcoxon_signed_rank(mfw, cvm, "less")
    c = wilcoxon_signed_rank(fw_t, mfw)
    assert (a.statistic, b.statistic, c.statistic) == (17, 20, 159)
    assert a.pvalue == pytest.approx(3.085e-06, rel=1e-3)
    assert b.pvalue == pytest.approx(5.528e-06, rel=1e-3)
    assert c.pvalue == pytest.approx(0.6893, rel=1e-3)
    _, f = friedman_iman_davenport(cvm, fw_t, mfw)
    assert f.statistic == pytest.approx(14.858, abs=5e-4)
    assert f.pvalue == pytest.approx(8.62e-06, rel=1e-2)  # the paper prints 1.72e-05 (twice)


def test_paper_accuracy_statistics_approximately():
    """Table 2 is rounded to 2 decimals, which creates ties: only W(FW vs CVM) = 19 is exact."""
    cvm, fw_a, mfw = (np.array(fw.PAPER_ACCURACY[m]) for m in ("cvm", "fw", "mfw"))
    assert wilcoxon_signed_rank(fw_a, cvm, "less").statistic == 19
    assert wilcoxon_signed_rank(mfw, cvm, "less").statistic == pytest.approx(48.5, abs=2)
    _, f = friedman_iman_davenport(cvm, fw_a, mfw)
    assert f.statistic == pytest.approx(11.879, abs=0.5)


def test_statistics_can_fail():
    with pytest.raises(ValueError, match="same length"):
        wilcoxon_signed_rank([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="three"):
        friedman_iman_davenport([1.0, 2.0], [2.0, 3.0])


class Threshold:
    """A 1-D stump: h(x) = x - cut."""

    def __init__(self, data):
        self.cut = 0.5 * (data.X[data.y > 0, 0].mean() + data.X[data.y < 0, 0].mean())

    def decision_function(self, X):
        return X[:, 0] - self.cut


def test_one_vs_one_voting_and_ties():
    X = np.array([[0.0], [1.0], [2.0], [0.1], [1.1], [2.1]])
    y = np.array([5.0, 7.0, 9.0, 5.0, 7.0, 9.0])
    ovo = one_vs_one(Dataset(X=X, y=y), Threshold)
    assert ovo.pairs == [(0, 1), (0, 2), (1, 2)]
    # class a (smaller code) is +1 in each pair, so the stump votes for a when x > cut
    votes = ovo.votes(np.array([[1.0]]))
    assert votes.sum() == 3
    # a three-way tie (one vote each) goes to the smallest class index
    tie = type("Tie", (), {"decision_function": lambda self, X: np.array([1.0, -1.0, 1.0])[:1]})
    ovo.predictors = [tie(), type("B", (), {"decision_function": lambda s, X: -np.ones(1)})(),
                      type("C", (), {"decision_function": lambda s, X: np.ones(1)})()]  # fmt: skip
    # pair (0,1) -> 0, pair (0,2) -> 2, pair (1,2) -> 1: one vote each
    assert ovo.votes(np.zeros((1, 1))).tolist() == [[1, 1, 1]]
    assert ovo.predict(np.zeros((1, 1)))[0] == 5.0
    with pytest.raises(DataError, match="two classes"):
        one_vs_one(Dataset(X=X, y=np.ones(6)), Threshold)


def test_suite_summary_runs_the_tests_on_five_complete_sets():
    rng = np.random.default_rng(0)
    records = [
        {
            "dataset": f"d{k}",
            "method": method,
            "seconds": float(rng.uniform(1, 9)),
            "accuracy": 90.0,
        }
        for k in range(5)
        for method in ("fw", "mfw", "mfw_all", "mfw_shrink", "svc")
    ]
    text = fw.summarize(records)
    assert "Wilcoxon MFW vs SVC W=" in text
    assert "FW vs SVC W=" in text
    assert "FW < MFW W=" in text
    assert "Friedman-Iman-Davenport (FW, MFW, SVC) F=" in text
    assert "SVC/fw time" in text
    assert "over 5 sets (d0, d1, d2, d3, d4): Wilcoxon MFW vs SVC" in text
    assert "over 5 sets (d0, d1, d2, d3, d4): Wilcoxon mfw_shrink < MFW" in text
    assert "Friedman-Iman-Davenport (MFW, mfw_shrink, SVC) F=" in text
    assert "CVM/FW/MFW tests not run: 0 sets" in text
    assert "MFW/mfw_all/SVC tests not run: 4 sets" in fw.summarize(records[:-1])
    assert "MFW/mfw_shrink/SVC tests not run: 4 sets" in fw.summarize(records[:-1])
    assert "FW/MFW/SVC tests not run: 4 sets" in fw.summarize(records[:-1])
