"""``BUILTIN_RULES``: every built-in rule class by its ``rule_to_invoke`` name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from ._activations import DeadRelu, SaturatedActivation
from ._base import BuiltinRule
from ._classification import ClassImbalance, Confusion
from ._gradients import PoorWeightInitialization, VanishingGradient, WeightUpdateRatio
from ._inputs import CheckInputImages, NLPSequenceRatio
from ._losses import LossNotDecreasing, Overfit
from ._overtraining import Overtraining
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

__all__ = ["BUILTIN_RULES", "rule_configs_name"]

BUILTIN_RULES: Mapping[str, type[BuiltinRule]] = MappingProxyType(
    {
        cls.__name__: cls
        for cls in (
            VanishingGradient,
            ExplodingTensor,
            WeightUpdateRatio,
            AllZero,
            ClassImbalance,
            LossNotDecreasing,
            Overfit,
            Overtraining,
            SimilarAcrossRuns,
            StalledTrainingRule,
            TensorVariance,
            UnchangedTensor,
            CheckInputImages,
            NLPSequenceRatio,
            Confusion,
            FeatureImportanceOverweight,
            TreeDepth,
            DeadRelu,
            PoorWeightInitialization,
            SaturatedActivation,
            CreateXgboostReport,
        )
    }
)


_WORD_START = re.compile(r"(?<!^)(?=[A-Z][a-z])|(?<=[a-z0-9])(?=[A-Z])")


def rule_configs_name(rule_name: str) -> str:
    """The ``smdebug_rulesconfig`` function of a rule: ``LossNotDecreasing`` ->
    ``loss_not_decreasing``, ``NLPSequenceRatio`` -> ``nlp_sequence_ratio``."""
    return _WORD_START.sub("_", rule_name).lower()
