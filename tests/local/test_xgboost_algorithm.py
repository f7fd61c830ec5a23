"""The emulated SageMaker XGBoost algorithm: image detection, hyperparameters, channels, data, model."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xgboost as xgb

from sagemaker_debugger_ext._container_env import ContainerPaths
from sagemaker_debugger_ext._exceptions import LocalJobInputError
from sagemaker_debugger_ext.local._xgb_algorithm import algorithm_version, check_request
from sagemaker_debugger_ext.local._xgb_algorithm._channels import data_format
from sagemaker_debugger_ext.local._xgb_algorithm._data import load_dmatrix
from sagemaker_debugger_ext.local._xgb_algorithm._hyperparameters import (
    validate_hyperparameters,
)
from sagemaker_debugger_ext.local._xgb_algorithm._train import main, train
from sagemaker_debugger_ext.local.store._job_spec import resolve_job_spec

IMAGE = "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1"


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:0.90-2-cpu-py3", "0.90-2"),
        ("683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.0-1-cpu-py3", "1.0-1"),
        ("683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.2-1", "1.2-1"),
        ("246618743249.dkr.ecr.us-west-2.amazonaws.com/sagemaker-xgboost:3.0-5", "3.0-5"),
        ("685385470294.dkr.ecr.eu-west-1.amazonaws.com/xgboost:1", None),
        ("763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.1-cpu-py310", None),
        ("local", None),
    ],
    ids=["0.90-2", "1.0-1", "1.2-1", "3.0-5", "legacy-xgboost", "pytorch", "local"],
)
def test_algorithm_version_from_image(image: str, version: str | None) -> None:
    """Only the sagemaker-xgboost algorithm image (any region, any version) is the algorithm."""
    assert algorithm_version(image) == version


def test_sdk_image_uris_are_recognised() -> None:
    """What sagemaker.image_uris.retrieve returns for the notebook's versions is recognised."""
    import sagemaker

    for version in ("0.90-2", "1.0-1", "1.2-1", "1.7-1"):
        assert algorithm_version(sagemaker.image_uris.retrieve("xgboost", "us-east-1", version)) == version


def test_hyperparameters_parsed_with_types_and_aliases() -> None:
    """Strings become the container's types; aliases map to keys; JSON-quoted strings are unquoted."""
    got = validate_hyperparameters(
        {"max_depth": "5", "learning_rate": "0.2", "gamma": "4", "subsample": "0.7", "objective": '"binary:logistic"',
         "num_round": "51", "eval_metric": "auc,error@0.4", "sagemaker_region": '"us-east-1"'},
        "1.7-1",
    )  # fmt: skip
    assert got == {"max_depth": 5, "eta": 0.2, "gamma": 4.0, "subsample": 0.7, "objective": "binary:logistic",
                   "num_round": 51, "eval_metric": ["auc", "error@0.4"]}  # fmt: skip


def test_silent_only_before_1_2() -> None:
    """'silent' (the census notebook passes it) exists in the 0.90 and 1.0 images only, as in the container."""
    assert validate_hyperparameters({"num_round": "2", "silent": "0"}, "0.90-2")["silent"] == 0
    with pytest.raises(LocalJobInputError, match="HyperParameters.silent"):
        validate_hyperparameters({"num_round": "2", "silent": "0"}, "1.7-1")


BAD_HPS = [
    ({}, "HyperParameters.num_round", "None"),
    ({"num_round": "0"}, "HyperParameters.num_round", ">= 1"),
    ({"num_round": "ten"}, "HyperParameters.num_round", "'ten'"),
    ({"num_round": "3", "max_dept": "3"}, "did you mean 'max_depth'", "max_dept"),
    ({"num_round": "3", "eta": "1.5"}, "HyperParameters.eta", "in [0, 1]"),
    ({"num_round": "3", "subsample": "0"}, "HyperParameters.subsample", "in (0, 1]"),
    ({"num_round": "3", "objective": "binary"}, "HyperParameters.objective", "binary:logistic"),
    ({"num_round": "3", "objective": "multi:softmax"}, "HyperParameters.num_class", "multi:softmax"),
    ({"num_round": "3", "num_class": "3"}, "HyperParameters.num_class", "left out"),
    ({"num_round": "3", "eval_metric": "auc", "objective": "reg:squarederror"}, "HyperParameters.eval_metric", "auc"),
    ({"num_round": "3", "eval_metric": "accuracyy"}, "HyperParameters.eval_metric", "accuracyy"),
    ({"num_round": "3", "tree_method": "fast"}, "HyperParameters.tree_method", "'fast'"),
    ({"num_round": "3", "csv_weights": "2"}, "HyperParameters.csv_weights", "in [0, 1]"),
    ({"num_round": "3", "_kfold": "3"}, "HyperParameters._kfold", "cross-validation"),
]


@pytest.mark.parametrize(("hps", "field", "detail"), BAD_HPS, ids=[f"{i}-{r[1]}" for i, r in enumerate(BAD_HPS)])
def test_bad_hyperparameters_name_the_field(hps: dict[str, str], field: str, detail: str) -> None:
    """Every bad hyperparameter is a LocalJobInputError naming the field, the value or what is allowed."""
    with pytest.raises(LocalJobInputError) as info:
        validate_hyperparameters(hps, "1.7-1")
    assert field in str(info.value)
    assert detail in str(info.value)


@pytest.mark.parametrize(
    ("content_type", "fmt"),
    [(None, "libsvm"), ("csv", "csv"), ("text/csv", "csv"), ("text/csv; label_size=1", "csv"),
     ("text/x-libsvm", "libsvm"), ("application/x-parquet", "parquet")],
)  # fmt: skip
def test_content_types_the_container_accepts(content_type: str | None, fmt: str) -> None:
    """The container's content types (default text/libsvm) map to the data format."""
    assert data_format(content_type) == fmt


def test_parquet_needs_pyarrow(tmp_path: Path) -> None:
    """A parquet train channel is refused up front, naming the field, when pyarrow is missing."""
    import importlib.util

    if importlib.util.find_spec("pyarrow") is not None:
        pytest.skip("pyarrow is installed here: parquet channels are read")
    channels = [{"ChannelName": "train", "ContentType": "application/x-parquet",
                 "DataSource": {"FileDataSource": {"FileUri": tmp_path.as_uri()}}}]  # fmt: skip
    with pytest.raises(LocalJobInputError, match=r"'InputDataConfig\[train\].ContentType' .*pyarrow"):
        check_request(_request(tmp_path, {"num_round": "2"}, channels))


@pytest.mark.parametrize(
    "content_type", ["application/json", "text/csv;label_size=2", "application/x-recordio-protobuf"]
)
def test_bad_content_types_name_the_field(content_type: str) -> None:
    """Other content types are refused, naming the field and the value."""
    with pytest.raises(LocalJobInputError, match=r"'ContentType' must be .*" + content_type.split(";")[0]):
        data_format(content_type)


def _request(tmp_path: Path, hps: dict[str, str], channels: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    train = tmp_path / "train.csv"
    train.write_text("1,0.5,0.2\n0,0.1,0.9\n")
    default = [{"ChannelName": "train", "ContentType": "text/csv",
                "DataSource": {"FileDataSource": {"FileUri": train.as_uri()}}}]  # fmt: skip
    return {
        "TrainingJobName": "xgb-algo",
        "AlgorithmSpecification": {"TrainingImage": IMAGE, "TrainingInputMode": "File"},
        "HyperParameters": hps,
        "InputDataConfig": default if channels is None else channels,
        "OutputDataConfig": {"S3OutputPath": (tmp_path / "out").as_uri()},
        "ResourceConfig": {"InstanceType": "local", "InstanceCount": 1, "VolumeSizeInGB": 1},
    }


def test_job_spec_runs_the_algorithm_without_entry_point(tmp_path: Path) -> None:
    """No sagemaker_program with the algorithm image: the spec names the algorithm version."""
    spec = resolve_job_spec(_request(tmp_path, {"num_round": "2"}), default_output_path="", base_dir=tmp_path)
    assert spec.algorithm_version == "1.7-1"
    assert spec.entry_point == ""


def test_job_spec_refuses_bad_input_before_start(tmp_path: Path) -> None:
    """Bad hyperparameters and channels are refused when the job is resolved (before any process)."""
    with pytest.raises(LocalJobInputError, match="HyperParameters.eta"):
        resolve_job_spec(_request(tmp_path, {"num_round": "2", "eta": "-1"}), default_output_path="")
    bad_channel = [{"ChannelName": "training", "DataSource": {"FileDataSource": {"FileUri": tmp_path.as_uri()}}}]
    with pytest.raises(LocalJobInputError, match=r"InputDataConfig\[0\].ChannelName.*'training'"):
        check_request(_request(tmp_path, {"num_round": "2"}, bad_channel))
    with pytest.raises(LocalJobInputError, match="'train' channel"):
        check_request(_request(tmp_path, {"num_round": "2"}, []))
    two_hosts = _request(tmp_path, {"num_round": "2"})
    two_hosts["ResourceConfig"]["InstanceCount"] = 2
    with pytest.raises(LocalJobInputError, match="'ResourceConfig.InstanceCount' must be 1 .* 2"):
        check_request(two_hosts)
    other = {**_request(tmp_path, {}), "AlgorithmSpecification": {"TrainingImage": "local"}}
    with pytest.raises(LocalJobInputError, match="sagemaker_program"):
        resolve_job_spec(other, default_output_path="")


def test_csv_reading_label_first_weights_and_header_error(tmp_path: Path) -> None:
    """CSV: label in column 0, weights in column 1 with csv_weights=1; a header row is a clear error."""
    folder = tmp_path / "train"
    (folder / "part").mkdir(parents=True)
    (folder / "a.csv").write_text("1,0.5,2\n0,1.5,\n")
    (folder / "part" / "b.csv").write_text("1,2.5,4\n")
    (folder / "_SUCCESS").write_text("")
    d = load_dmatrix(folder, "csv")
    assert d is not None and (d.num_row(), d.num_col()) == (3, 2)
    np.testing.assert_array_equal(d.get_label(), [1, 0, 1])
    weighted = load_dmatrix(folder, "csv", csv_weights=1)
    assert weighted is not None and weighted.num_col() == 1
    np.testing.assert_array_equal(weighted.get_weight(), [0.5, 1.5, 2.5])
    header = tmp_path / "h.csv"
    header.write_text("label,a,b\n1,2,3\n")
    with pytest.raises(LocalJobInputError, match="line 1 .*h.csv.*without a header row"):
        load_dmatrix(header, "csv")


def test_libsvm_reading_matches_xgboost(tmp_path: Path) -> None:
    """libsvm: columns are the indices as xgboost's own reader takes them; weights after the label."""
    path = tmp_path / "train.libsvm"
    path.write_text("1:2 1:0.5 3:2\n0 2:1.5\n")
    d = load_dmatrix(path, "libsvm")
    assert d is not None
    assert d.get_data().toarray().tolist() == [[0.0, 0.5, 0.0, 2.0], [0.0, 0.0, 1.5, 0.0]]
    np.testing.assert_array_equal(d.get_label(), [1, 0])
    np.testing.assert_array_equal(d.get_weight(), [2, 1])
    (tmp_path / "bad.libsvm").write_text("1 1:0.5 oops\n")
    with pytest.raises(LocalJobInputError, match="line 1 .*bad.libsvm.* is not libsvm"):
        load_dmatrix(tmp_path / "bad.libsvm", "libsvm")


def _host(tmp_path: Path, hps: dict[str, str], rows: int = 60) -> ContainerPaths:
    paths = ContainerPaths(root=tmp_path / "opt-ml")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, 3))
    table = np.column_stack([(x[:, 0] > 0).astype(int), x])
    for channel in ("train", "validation"):
        paths.channel_dir(channel).mkdir(parents=True)
        np.savetxt(paths.channel_dir(channel) / "data.csv", table, delimiter=",", fmt="%.5f")
    paths.input_config_dir.mkdir(parents=True, exist_ok=True)
    paths.config_file("hyperparameters.json").write_text(json.dumps(hps))
    config = {c: {"ContentType": "text/csv", "TrainingInputMode": "File"} for c in ("train", "validation")}
    paths.config_file("inputdataconfig.json").write_text(json.dumps(config))
    return paths


@pytest.mark.parametrize(("version", "pickled"), [("0.90-2", True), ("1.2-1", True), ("1.3-1", False)])
def test_model_saved_where_and_how_the_container_saves_it(tmp_path: Path, version: str, pickled: bool) -> None:
    """<model dir>/xgboost-model: a pickled Booster before 1.3, xgboost's save_model from 1.3."""
    paths = _host(tmp_path, {"num_round": "3", "objective": "binary:logistic", "max_depth": "2"})
    location = train(paths, version)
    assert location == paths.model_dir / "xgboost-model"
    if pickled:
        with open(location, "rb") as fh:
            booster = pickle.load(fh)
    else:
        booster = xgb.Booster()
        booster.load_model(bytearray(location.read_bytes()))
    assert booster.num_boosted_rounds() == 3


def test_failure_is_written_with_the_reason(tmp_path: Path) -> None:
    """A data error ends the process with exit 1 and /opt/ml/output/failure naming the problem."""
    paths = _host(tmp_path, {"num_round": "3"})
    (paths.channel_dir("train") / "data.csv").write_text("x,y\n")
    assert main(["--root", str(paths.root), "--version", "1.7-1"]) == 1
    assert paths.failure_file.read_text().startswith("ClientError: line 1 'x,y'")


def _client_request(tmp_path: Path, name: str, train_text: str, hps: dict[str, str]) -> dict[str, Any]:
    train = tmp_path / f"{name}.csv"
    train.write_text(train_text)
    request = _request(tmp_path, hps)
    request["TrainingJobName"] = name
    request["InputDataConfig"][0]["DataSource"] = {"FileDataSource": {"FileUri": train.as_uri()}}
    request["DebugHookConfig"] = {"S3OutputPath": (tmp_path / "out").as_uri(), "CollectionConfigurations": []}
    return request


@pytest.mark.slow
def test_local_job_bad_data_fails_with_client_error(tmp_path: Path) -> None:
    """Through the local client: a CSV with a header fails the job, the reason names file and line."""
    from sagemaker_debugger_ext.local import LocalTrainingClient

    client = LocalTrainingClient(settings={"StartMonitor": False})
    client.create_training_job(**_client_request(tmp_path, "xgb-bad-data", "label,a\n1,2\n", {"num_round": "2"}))
    desc = client.wait("xgb-bad-data", timeout_s=120)
    assert desc["TrainingJobStatus"] == "Failed"
    assert "ClientError: line 1 'label,a'" in desc["FailureReason"]
    assert "xgb-bad-data.csv" in desc["FailureReason"]


def test_local_job_bad_hyperparameter_refused_before_start(tmp_path: Path) -> None:
    """Through the local client: a bad hyperparameter is refused at create, and no job exists."""
    from sagemaker_debugger_ext.local import LocalTrainingClient

    client = LocalTrainingClient(settings={"StartMonitor": False})
    request = _client_request(tmp_path, "xgb-bad-hp", "1,2\n0,1\n", {"num_round": "2", "max_depth": "deep"})
    with pytest.raises(LocalJobInputError, match=r"'HyperParameters.max_depth' must be an integer >= 0 \(got 'deep'\)"):
        client.create_training_job(**request)
    assert [j["TrainingJobName"] for j in client.list_training_jobs()["TrainingJobSummaries"]] == []


def test_debug_hook_gets_hyperparameters_train_and_validation_data(tmp_path: Path) -> None:
    """With debughookconfig.json the hook saves hyperparameters, predictions/labels (validation) and SHAP (train)."""
    from sagemaker_debugger_ext.trials import create_trial

    paths = _host(tmp_path, {"num_round": "4", "objective": "binary:logistic", "max_depth": "2", "eta": "0.3"})
    names = ("hyperparameters", "predictions", "labels", "average_shap", "full_shap")
    hook_config = {"LocalPath": str(tmp_path / "tensors"), "CollectionConfigurations": [
        {"CollectionName": n, "CollectionParameters": {"save_interval": "2"}} for n in names]}  # fmt: skip
    paths.config_file("debughookconfig.json").write_text(json.dumps(hook_config))
    train(paths, "1.7-1")
    trial = create_trial(str(tmp_path / "tensors"))
    assert trial.steps() == [0, 2]
    tensors = set(trial.tensor_names())
    assert {"hyperparameters/max_depth", "hyperparameters/eta", "hyperparameters/objective"} <= tensors
    assert "hyperparameters/num_round" not in tensors  # the container pops it before building the hook
    assert {
        "predictions",
        "labels",
        "train-logloss",
        "validation-logloss",
        "average_shap/f0",
        "full_shap/f2",
    } <= tensors
    assert trial.tensor("full_shap/f2").value(2).shape == (60, 4)
    assert trial.tensor("labels").value(0).shape == (60,)
