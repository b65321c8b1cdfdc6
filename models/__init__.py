"""Models: machine-learning training problems declared once (LP, QP, MIQP)."""

from .knowledge_svm import KnowledgeBasedSVM, KnowledgeSet
from .lad import LADRegression
from .pu_learning import PULearning
from .s3vm import SemiSupervisedSVM
from .weighted_svm import WeightedSVM

__all__ = [
    "KnowledgeBasedSVM",
    "KnowledgeSet",
    "LADRegression",
    "PULearning",
    "SemiSupervisedSVM",
    "WeightedSVM",
]
