"""Custom rules written for smdebug (only the import changed), used by the local-mode e2e tests."""

from sagemaker_debugger_ext.rules import Rule


class LossAbove(Rule):
    """Fires when the 'loss' tensor exceeds ``threshold`` (a string, as the service passes it)."""

    def __init__(self, base_trial, threshold="100"):
        super().__init__(base_trial)
        self.threshold = float(threshold)

    def invoke_at_step(self, step):
        return float(self.base_trial.tensor("loss").value(step)[0]) > self.threshold
