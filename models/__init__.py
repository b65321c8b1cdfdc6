"""Models: machine-learning training problems declared once (LP, QP, MIQP)."""

from .dask_models import DaskLADRegression, DaskQuantileRegression, DaskWeightedSVM
from .empirical_risk import EmpiricalRisk
from .knowledge_svm import KnowledgeBasedSVM, KnowledgeSet
from .l2svm import L2SVM
from .lad import LADRegression
from .pu_learning import PULearning
from .regularized_lad import RegularizedLAD
from .s3vm import SemiSupervisedSVM
from .weighted_svm import WeightedSVM

__all__ = [
    "L2SVM",
    "DaskLADRegression",
    "DaskQuantileRegression",
    "DaskWeightedSVM",
    "EmpiricalRisk",
    "KnowledgeBasedSVM",
    "KnowledgeSet",
    "LADRegression",
    "PULearning",
    "RegularizedLAD",
    "SemiSupervisedSVM",
    "WeightedSVM",
]
