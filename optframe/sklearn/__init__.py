"""scikit-learn estimators over optframe's models, each taking ``driver=`` and ``backend=``.

Every estimator builds one model of :mod:`optframe.models` in ``fit``, solves it with
:func:`optframe.solve` and keeps the :class:`~optframe.result.Result` as ``result_``. They pass
scikit-learn's estimator checks (``S3VMClassifier`` all but one, see its Notes) and work in
``Pipeline`` and ``GridSearchCV``.

==================================== ==================================================
estimator                            model
==================================== ==================================================
:class:`LADRegressor`                :class:`~optframe.models.LADRegression` (LP)
:class:`QuantileRegressor`           :class:`~optframe.models.EmpiricalRisk`, pinball + L1 (LP)
:class:`SVMClassifier`               :class:`~optframe.models.WeightedSVM` (QP)
:class:`LogisticRegression`          :class:`~optframe.models.EmpiricalRisk`, logistic + L2 (EXP)
:class:`L2SVMClassifier`             :class:`~optframe.models.L2SVM` (QP)
:class:`S3VMClassifier`              :class:`~optframe.models.SemiSupervisedSVM` (MIQP)
:class:`PUClassifier`                :class:`~optframe.models.PULearning` (QP)
:class:`KnowledgeBasedSVMClassifier` :class:`~optframe.models.KnowledgeBasedSVM` (QP)
==================================== ==================================================

The classifiers are binary: any two labels (``classes_[1]`` is the positive class); for more
classes wrap them in ``sklearn.multiclass.OneVsRestClassifier``.
"""

from optframe.sklearn.knowledge import KnowledgeBasedSVMClassifier
from optframe.sklearn.lad import LADRegressor
from optframe.sklearn.logistic import LogisticRegression
from optframe.sklearn.pu import PUClassifier
from optframe.sklearn.quantile import QuantileRegressor
from optframe.sklearn.s3vm import S3VMClassifier
from optframe.sklearn.svm import L2SVMClassifier, SVMClassifier

__all__ = [
    "KnowledgeBasedSVMClassifier",
    "L2SVMClassifier",
    "LADRegressor",
    "LogisticRegression",
    "PUClassifier",
    "QuantileRegressor",
    "S3VMClassifier",
    "SVMClassifier",
]
