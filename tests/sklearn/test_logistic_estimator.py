"""``optframe.sklearn.LogisticRegression`` passes scikit-learn's estimator checks."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from optframe.sklearn import LogisticRegression

#: Checks that ask more of a solution than its certified gap gives.
EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": (
        "an integer weight is a repeated row exactly (tests/drivers/test_dcd_logistic.py compares "
        "the objectives), but the check compares probabilities to 1e-7, finer than a solve "
        "certified to a relative gap of 1e-8 places w (its distance to the optimum is of the "
        "order of the square root of the gap)"
    ),
    "check_sample_weight_equivalence_on_sparse_data": (
        "as check_sample_weight_equivalence_on_dense_data"
    ),
}


@parametrize_with_checks(
    [LogisticRegression()], expected_failed_checks=lambda estimator: EXPECTED_FAILURES
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
