"""SDK v3 ModelTrainer's request layout as a local job, without the SDK: the request and the
``sm_drivers`` files are built here as ModelTrainer writes them (sagemaker-train 1.27), with
``file://`` channels. tests/train/sdk3 runs the same layout from the real SDK v3 through ``serve``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from polling import wait_until

from sagemaker_debugger_ext.exceptions import LocalJobInputError

ENTRYPOINT = ["/bin/bash"]
ARGUMENTS = ["-c", "chmod +x /opt/ml/input/data/sm_drivers/sm_train.sh && /opt/ml/input/data/sm_drivers/sm_train.sh"]
_BASIC = "$SM_PYTHON_CMD /opt/ml/input/data/sm_drivers/distributed_drivers/basic_script_driver.py"


def _drivers(folder: Path, *, source_code: dict[str, Any], distributed: dict[str, Any], driver_line: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "sourcecode.json").write_text(json.dumps(source_code))
    (folder / "distributed.json").write_text(json.dumps(distributed))
    (folder / "sm_train.sh").write_text(f"#!/bin/bash\nset -e\ncd /opt/ml/input/data/code\n{driver_line}\n")
    return folder


@pytest.fixture
def trainer_request(tmp_path: Path, scripts_dir: Path) -> Callable[..., dict[str, Any]]:
    """A ModelTrainer-shaped request running ``train_steps.py`` from a ``code`` channel."""

    def build(
        name: str,
        *,
        hps: dict[str, str] | None = None,
        entry_script: str = "train_steps.py",
        distributed: dict[str, Any] | None = None,
        driver_line: str = _BASIC,
        command: str | None = None,
    ) -> dict[str, Any]:
        source_code = {"source_dir": str(scripts_dir), "entry_script": entry_script, "command": command,
                       "requirements": None, "ignore_patterns": [], "args": None}  # fmt: skip
        drivers = _drivers(tmp_path / name / "sm_drivers", source_code=source_code, distributed=distributed or {},
                           driver_line=driver_line)  # fmt: skip
        out = (tmp_path / "out").as_uri()

        def channel(channel_name: str, folder: Path) -> dict[str, Any]:
            return {"ChannelName": channel_name, "DataSource": {"FileDataSource": {"FileUri": folder.as_uri()}}}

        return {
            "TrainingJobName": name,
            "AlgorithmSpecification": {
                "TrainingImage": "local-python",
                "TrainingInputMode": "File",
                "ContainerEntrypoint": ENTRYPOINT,
                "ContainerArguments": ARGUMENTS,
            },
            "RoleArn": "arn:aws:iam::123456789012:role/local",
            "OutputDataConfig": {"S3OutputPath": out},
            "ResourceConfig": {"InstanceType": "local", "InstanceCount": 1, "VolumeSizeInGB": 30},
            "StoppingCondition": {"MaxRuntimeInSeconds": 120},
            "HyperParameters": hps or {},
            "InputDataConfig": [channel("code", scripts_dir), channel("sm_drivers", drivers)],
            "DebugHookConfig": {"S3OutputPath": out, "CollectionConfigurations": []},
        }

    return build


def _finish(client: Any, name: str) -> dict[str, Any]:
    wait_until(lambda: client.describe_training_job(name)["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"),
               timeout_s=120, interval_s=0.1, what=f"job {name} to end")  # fmt: skip
    client.wait_supervisor_exit(name)
    return client.describe_training_job(name)


def _log(client: Any, name: str) -> str:
    return client.store.paths(name).host_log("algo-1").read_text()


@pytest.mark.slow
def test_basic_driver_runs_the_entry_script_with_hyperparameters_and_toolkit_env(
    local_client: Any, trainer_request: Callable[..., dict[str, Any]]
) -> None:
    """No sagemaker_program: the entry script named in sourcecode.json runs, its hyperparameters as
    ``--name value``, with ModelTrainer's SM_ENTRY_SCRIPT / SM_HOST_COUNT / SM_CURRENT_HOST_RANK; the hook's
    config is written as for any job and the loss lands in the trial."""
    from sagemaker_debugger_ext.trials import create_trial

    request = trainer_request("mt-basic", hps={"steps": "3", "expect-channel-file": "code/train_steps.py"})
    local_client.create_training_job(**request)
    desc = _finish(local_client, "mt-basic")
    log = _log(local_client, "mt-basic")
    assert desc["TrainingJobStatus"] == "Completed", (desc.get("FailureReason"), log[-2000:])
    assert "channel code file train_steps.py" in log  # the code channel is mounted like any channel
    trial = create_trial(f"{request['OutputDataConfig']['S3OutputPath']}/mt-basic/debug-output")
    assert trial.tensor("loss").steps() == [0, 1, 2]
    assert "'--expect-channel-file', 'code/train_steps.py'" not in log  # parsed, not left over


@pytest.mark.slow
def test_command_driver_runs_the_command_in_the_code_folder(
    local_client: Any, trainer_request: Callable[..., dict[str, Any]]
) -> None:
    """``SourceCode.command`` (no driver script in sm_train.sh): the command runs with this Python on PATH."""
    request = trainer_request(
        "mt-command",
        command="python train_steps.py --steps 2",
        driver_line='CMD="python train_steps.py --steps 2"\neval "$CMD"',
    )
    local_client.create_training_job(**request)
    desc = _finish(local_client, "mt-command")
    assert desc["TrainingJobStatus"] == "Completed", (desc.get("FailureReason"), _log(local_client, "mt-command"))
    assert "start worker_0 of 1" in _log(local_client, "mt-command")


@pytest.mark.slow
def test_torchrun_driver_starts_process_count_per_node_workers(
    local_client: Any, trainer_request: Callable[..., dict[str, Any]]
) -> None:
    """distributed.json of a Torchrun(process_count_per_node=2): two ranks under torch.distributed.run."""
    pytest.importorskip("torch")
    request = trainer_request(
        "mt-torchrun",
        hps={"steps": "2"},
        distributed={"process_count_per_node": 2, "smp": None},
        driver_line="$SM_PYTHON_CMD /opt/ml/input/data/sm_drivers/distributed_drivers/torchrun_driver.py",
    )
    local_client.create_training_job(**request)
    desc = _finish(local_client, "mt-torchrun")
    log = _log(local_client, "mt-torchrun")
    assert desc["TrainingJobStatus"] == "Completed", (desc.get("FailureReason"), log[-2000:])
    assert "start worker_0 of 2" in log and "start worker_1 of 2" in log


def test_layout_problems_are_refused_before_anything_starts(
    local_client: Any, trainer_request: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    """An entry script outside source_dir, an MPI driver, a missing sourcecode.json: LocalJobInputError, no job."""
    with pytest.raises(LocalJobInputError, match="'SourceCode.entry_script' must be a .py or .sh path inside"):
        local_client.create_training_job(**trainer_request("mt-escape", entry_script="../train_steps.py"))
    mpi = "$SM_PYTHON_CMD /opt/ml/input/data/sm_drivers/distributed_drivers/mpi_driver.py"
    with pytest.raises(LocalJobInputError, match="'distributed' must be Torchrun or none.*mpi_driver.py"):
        local_client.create_training_job(**trainer_request("mt-mpi", driver_line=mpi))
    request = trainer_request("mt-nojson")
    os.remove(tmp_path / "mt-nojson" / "sm_drivers" / "sourcecode.json")
    with pytest.raises(LocalJobInputError, match="'sm_drivers' channel .* has no readable 'sourcecode.json'"):
        local_client.create_training_job(**request)
    assert not any(local_client.store.exists(n) for n in ("mt-escape", "mt-mpi", "mt-nojson"))


def test_model_trainer_without_source_code_is_told_what_to_give(
    local_client: Any, trainer_request: Callable[..., dict[str, Any]]
) -> None:
    """A ModelTrainer with only a training image sends no script: the error names SourceCode."""
    request = trainer_request("mt-image-only")
    request["InputDataConfig"] = []
    del (
        request["AlgorithmSpecification"]["ContainerEntrypoint"],
        request["AlgorithmSpecification"]["ContainerArguments"],
    )
    with pytest.raises(LocalJobInputError, match=r"ModelTrainer: source_code=SourceCode\(source_dir=\.\.\."):
        local_client.create_training_job(**request)
