"""Warnings before training when a rule cannot see enough (issue 15, item 2)."""

from __future__ import annotations

from pathlib import Path

from sagemaker_debugger_ext.local.store._rule_coverage import rule_coverage_warnings


def _request(rules: list[str], collections: dict[str, str], hook_interval: str | None = "10",
             hyperparameters: dict[str, str] | None = None) -> dict[str, object]:  # fmt: skip
    return {
        "HyperParameters": hyperparameters or {},
        "DebugHookConfig": {
            "HookParameters": {"save_interval": hook_interval} if hook_interval else {},
            "CollectionConfigurations": [
                {"CollectionName": c, "CollectionParameters": {"save_interval": i}} for c, i in collections.items()
            ],
        },
        "DebugRuleConfigurations": [
            {"RuleConfigurationName": r, "RuleParameters": {"rule_to_invoke": r}} for r in rules
        ],
    }


def test_collection_interval_overriding_the_hooks_is_named_with_the_fix() -> None:
    (text,) = rule_coverage_warnings(_request(["LossNotDecreasing"], {"losses": "500"}))
    assert text.startswith("Rule LossNotDecreasing: collection 'losses' saves every 500 steps")
    assert "overrides the hook's save_interval 10" in text
    assert 'collections_to_save=[CollectionConfig("losses", {"save_interval": "10"})]' in text


def test_interval_beyond_the_jobs_steps_from_hyperparameters() -> None:
    (text,) = rule_coverage_warnings(
        _request(["VanishingGradient"], {"gradients": "500"}, hyperparameters={"max_steps": "320"})
    )
    assert "job runs about 320 steps (max_steps=320)" in text and "'gradients'" in text


def test_no_warning_when_the_rule_can_see_the_job() -> None:
    request = _request(["LossNotDecreasing", "VanishingGradient"], {"losses": "10", "gradients": "5"},
                       hyperparameters={"steps": "320"})  # fmt: skip
    assert rule_coverage_warnings(request) == []


def test_long_interval_without_a_known_length_or_hook_interval() -> None:
    (text,) = rule_coverage_warnings(_request(["LossNotDecreasing"], {"losses": "500"}, hook_interval=None))
    assert "saves every 500 steps; a job shorter than that" in text


def test_overfit_without_an_evaluation_phase_in_the_script(tmp_path: Path) -> None:
    plain, evaluating = tmp_path / "plain.py", tmp_path / "eval.py"
    plain.write_text("for step in range(10):\n    train(step)\n")
    evaluating.write_text("hook.set_mode(smd.modes.EVAL)\n")
    (tmp_path / "doc.py").write_text('"""never calls set_mode(EVAL)"""\n# modes.EVAL\ntrain()\n')
    assert rule_coverage_warnings(_request(["Overfit"], {"losses": "10"}), tmp_path / "doc.py")
    request = _request(["Overfit"], {"losses": "10"})
    (text,) = rule_coverage_warnings(request, plain)
    assert text.startswith("Rule Overfit compares TRAIN and EVAL losses") and "set_mode(modes.EVAL)" in text
    assert rule_coverage_warnings(request, evaluating) == []
    assert rule_coverage_warnings(request, None) == []  # no local script: nothing to judge


def test_no_hook_or_no_rules_no_warning() -> None:
    assert rule_coverage_warnings({"DebugRuleConfigurations": [{"RuleConfigurationName": "Overfit"}]}) == []
    assert rule_coverage_warnings(_request([], {"losses": "500"})) == []
