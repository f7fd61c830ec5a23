"""A custom rule written for smdebug (only the import changed): fires when a loss is NaN."""

import numpy as np

from sagemaker_debugger_ext.rules import Rule


class LossIsNaN(Rule):
    """Fires at the first step where a tensor of the 'losses' collection holds a NaN."""

    def __init__(self, base_trial):
        super().__init__(base_trial)

    def invoke_at_step(self, step):
        for name in self.base_trial.tensor_names(collection="losses"):
            if np.isnan(self.base_trial.tensor(name).value(step)).any():
                return True
        return False
