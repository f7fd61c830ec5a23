"""Open implementations of every SageMaker Debugger built-in (debugging) rule.

``BUILTIN_RULES`` maps the ``rule_to_invoke`` name to the class. Each class declares its
SageMaker parameters (names and defaults) in ``PARAMETERS``.
"""

from __future__ import annotations

from ._activations import DeadRelu, SaturatedActivation
from ._base import BuiltinRule
from ._classification import ClassImbalance, Confusion
from ._gradients import PoorWeightInitialization, VanishingGradient, WeightUpdateRatio
from ._inputs import CheckInputImages, NLPSequenceRatio
from ._losses import LossNotDecreasing, Overfit
from ._overtraining import Overtraining
from ._presets import RECOMMENDED_RULE_PARAMETERS, recommended_rule, recommended_rule_parameters
from ._registry import BUILTIN_RULES
from ._stalled import StalledTrainingRule
from ._tensors import (
    AllZero,
    ExplodingTensor,
    SimilarAcrossRuns,
    TensorVariance,
    UnchangedTensor,
)
from ._xgboost import FeatureImportanceOverweight, TreeDepth
from ._xgboost_report import CreateXgboostReport

__all__ = [
    "BUILTIN_RULES",
    "RECOMMENDED_RULE_PARAMETERS",
    "AllZero",
    "BuiltinRule",
    "CheckInputImages",
    "ClassImbalance",
    "Confusion",
    "CreateXgboostReport",
    "DeadRelu",
    "ExplodingTensor",
    "FeatureImportanceOverweight",
    "LossNotDecreasing",
    "NLPSequenceRatio",
    "Overfit",
    "Overtraining",
    "PoorWeightInitialization",
    "SaturatedActivation",
    "SimilarAcrossRuns",
    "StalledTrainingRule",
    "TensorVariance",
    "TreeDepth",
    "UnchangedTensor",
    "VanishingGradient",
    "WeightUpdateRatio",
    "recommended_rule",
    "recommended_rule_parameters",
]
