"""Recommended rule parameters: settings that stay quiet on healthy training.

AWS's defaults are kept as the defaults (compatibility); where a default cannot be quiet on
healthy training, ``RECOMMENDED_RULE_PARAMETERS`` gives parameters, in ``RuleParameters`` form
(strings), that are, with the noise-aware definitions (``noise_aware``, :mod:`._noise`) where
exact comparisons fire on noise. They are measured by ``python -m benchmarks rules_healthy``
(false alarms on generated healthy runs, per rule in ``docs/rules.md``) and
``python -m benchmarks rules`` (precision and recall on seeded faults)::

    from sagemaker_debugger_ext import Rule, rule_configs
    from sagemaker_debugger_ext.rules import recommended_rule

    rules = [recommended_rule("Overtraining"), recommended_rule("LossNotDecreasing")]
    # same as Rule.sagemaker(rule_configs.overtraining(),
    #                        rule_parameters=RECOMMENDED_RULE_PARAMETERS["Overtraining"])

Rules whose defaults are already quiet have no entry. Why each entry is needed:
``docs/rules.md``, "Quiet on healthy training".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ...config import Rule, rule_configs
from ._registry import BUILTIN_RULES, rule_configs_name

__all__ = ["RECOMMENDED_RULE_PARAMETERS", "recommended_rule", "recommended_rule_parameters"]

RECOMMENDED_RULE_PARAMETERS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "LossNotDecreasing": MappingProxyType(
            {"num_steps": "40", "increase_threshold_percent": "20", "noise_aware": "True"}
        ),
        "Overtraining": MappingProxyType(
            {"patience_train": "10", "patience_validation": "20", "delta": "0", "noise_aware": "True"}
        ),
        "ClassImbalance": MappingProxyType({"noise_aware": "True", "samples": "2000", "learning_window": "4"}),
        "Overfit": MappingProxyType({"patience": "2", "ratio_threshold": "0.5", "noise_aware": "True"}),
        "Confusion": MappingProxyType(
            {
                "mode": "EVAL",
                "min_diag": "0.5",
                "max_off_diag": "0.5",
                "noise_aware": "True",
                "patience": "2",
                "learning_window": "4",
            }
        ),
        "PoorWeightInitialization": MappingProxyType({"distribution_range": "1e-5", "ratio_steps": "1"}),
        "DeadRelu": MappingProxyType({"noise_aware": "True", "threshold_layer": "70"}),
        "TensorVariance": MappingProxyType({"collection_names": "weights", "max_threshold": "10"}),
        "TreeDepth": MappingProxyType({"window": "0"}),
    }
)


def recommended_rule_parameters(rule_name: str) -> dict[str, str]:
    """A copy of the recommended ``RuleParameters`` of ``rule_name`` (empty: its defaults are quiet)."""
    if rule_name not in BUILTIN_RULES:
        msg = f"'rule_name' must be a built-in rule (got {rule_name!r}); built-ins: {', '.join(sorted(BUILTIN_RULES))}"
        raise ValueError(msg)
    return dict(RECOMMENDED_RULE_PARAMETERS.get(rule_name, {}))


def recommended_rule(rule_name: str, **rule_kwargs: Any) -> Any:
    """``Rule.sagemaker(rule_configs.<rule>(), rule_parameters=<recommended>)``; ``rule_parameters``
    in ``rule_kwargs`` are applied on top of the recommended ones."""
    params = recommended_rule_parameters(rule_name)
    params.update(rule_kwargs.pop("rule_parameters", None) or {})
    base = getattr(rule_configs, rule_configs_name(rule_name))()
    return Rule.sagemaker(base, rule_parameters=params or None, **rule_kwargs)
