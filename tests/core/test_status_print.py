"""``print(result.status)`` shows the status's name; the enum stays an enum."""

import optframe as of
from optframe.data import Dataset
from optframe.models import LADRegression


def test_status_prints_its_name(capsys):
    result = of.solve(LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0])))
    print(result.status)
    assert capsys.readouterr().out == "OPTIMAL\n"
    assert f"{result.status}" == "OPTIMAL"
    assert result.status is of.Status.OPTIMAL
    assert result.status.value == "optimal"
    assert repr(result.status) == "<Status.OPTIMAL: 'optimal'>"
