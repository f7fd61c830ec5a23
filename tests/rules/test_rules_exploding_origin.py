"""ExplodingTensor names where the NaN came from: the first non-finite tensor in forward,
then backward order, at the first bad step (real PyTorch training with the hook)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from sagemaker_debugger_ext.pytorch import Hook, SaveConfig, modes
from sagemaker_debugger_ext.rules.builtin import ExplodingTensor
from sagemaker_debugger_ext.trials import create_trial

BAD_STEP = 2


class Inject(torch.nn.Module):
    """Multiplies by NaN from step BAD_STEP on."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x * float("nan") if self.calls > BAD_STEP else x


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.inject = Inject()
        self.fc2 = torch.nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.inject(self.fc1(x))))


def test_first_non_finite_tensor_in_forward_order(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net, loss_fn = Net(), torch.nn.MSELoss()
    hook = Hook(out_dir=str(tmp_path / "t"), save_all=True, save_config=SaveConfig(save_interval=1))
    hook.register_module(net)
    hook.register_loss(loss_fn)
    hook.set_mode(modes.TRAIN)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for _ in range(BAD_STEP + 2):
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    hook.close()
    rule = ExplodingTensor(create_trial(str(tmp_path / "t")))
    fired = [s for s in range(BAD_STEP + 2) if rule.invoke_at_step(s)]
    assert fired[0] == BAD_STEP
    first = rule.findings[0]
    # not the alphabetically first NaN (MSELoss_output_0), nor a later layer's output or a gradient
    assert (first.tensor, first.step, first.mode) == ("inject_output_0", BAD_STEP, "TRAIN")
    assert first.message.startswith("first of ") and "(forward, then backward)" in first.message
    names = [f.tensor for f in rule.findings]
    assert names.index("fc2_output_0") < names.index("MSELoss_output_0") < names.index("gradient/Net_fc2.weight")
    # backward order: the last layer's gradient comes before the first layer's
    assert names.index("gradient/Net_fc2.weight") < names.index("gradient/Net_fc1.weight")
