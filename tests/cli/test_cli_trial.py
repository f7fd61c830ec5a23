"""``sagemaker-debugger-ext trial``: run as the installed console script."""

from __future__ import annotations

import json
import struct
from pathlib import Path

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_trial_help(cli):
    """--help lists the plot and reduction options."""
    proc = cli("trial", "--help")
    assert proc.returncode == 0, proc.stderr
    for flag in ("--plot", "--out", "--reduction", "--collection", "--json", "PATH"):
        assert flag in proc.stdout


def test_trial_summary_table(cli, smdebug_runs):
    """The table shows modes, the worker, collections and tensor shapes of a real smdebug run."""
    proc = cli("trial", str(smdebug_runs / "sample_run"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for text in (
        "TRAIN",
        "EVAL",
        "worker_0",
        "losses",
        "gradients",
        "CrossEntropyLoss_output_0",
        "Net_fc1.weight",
        "(3, 4)",
    ):
        assert text in out, text


def test_trial_summary_json(cli, smdebug_runs):
    """--json gives steps per mode and shapes equal to what smdebug wrote."""
    proc = cli("trial", str(smdebug_runs / "sample_run"), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    modes = {m["mode"]: m for m in summary["modes"]}
    assert modes["TRAIN"]["steps"] == [0, 1, 2, 3, 4, 5]
    assert modes["EVAL"]["steps"] == [0, 1]
    assert modes["EVAL"]["global_steps"] == [4, 5]
    assert summary["workers"] == ["worker_0"]
    tensors = {t["name"]: t for t in summary["tensors"]}
    assert tensors["Net_fc1.weight"]["shape"] == [3, 4]
    assert "losses" in tensors["CrossEntropyLoss_output_0"]["collections"]
    assert summary["collections"]["losses"] == 1


def test_trial_collection_filter(cli, smdebug_runs):
    """--collection lists only that collection's tensors."""
    proc = cli("trial", str(smdebug_runs / "sample_run"), "--json", "--collection", "losses")
    assert proc.returncode == 0, proc.stderr
    names = [t["name"] for t in json.loads(proc.stdout)["tensors"]]
    assert names == ["CrossEntropyLoss_output_0"]


def test_trial_plot_scalar_and_reduction(cli, smdebug_runs, tmp_path):
    """--plot writes real PNGs for a scalar loss and for a weight's mean, named as asked."""
    run = str(smdebug_runs / "sample_run")
    loss = cli("trial", run, "--plot", "CrossEntropyLoss_output_0", "--out", str(tmp_path / "loss.png"))
    assert loss.returncode == 0, loss.stderr
    assert "loss.png" in loss.stdout
    assert _png_size(tmp_path / "loss.png")[0] > 100
    mean = cli("trial", run, "--plot", "Net_fc1.weight", "--reduction", "mean", cwd=tmp_path)
    assert mean.returncode == 0, mean.stderr
    assert _png_size(tmp_path / "Net_fc1.weight.png")[1] > 100


def test_trial_bad_path_is_one_line(cli, expect_error, expect_traceback, tmp_path):
    """A folder without a trial fails at once with one line naming it; --debug shows the traceback."""
    missing = str(tmp_path / "nope")
    expect_error(cli("trial", missing), "path", missing)
    expect_traceback(cli("--debug", "trial", missing))


def test_trial_bad_tensor_and_reduction(cli, expect_error, smdebug_runs, tmp_path):
    """An unknown tensor or reduction is named in a one-line error."""
    run = str(smdebug_runs / "sample_run")
    expect_error(cli("trial", run, "--plot", "no_such_tensor", "--out", str(tmp_path / "x.png")), "no_such_tensor")
    assert not (tmp_path / "x.png").exists()
    bad = cli("trial", run, "--plot", "Net_fc1.weight", "--reduction", "median")
    assert bad.returncode == 2
    assert "median" in bad.stderr and "Traceback" not in bad.stderr
    expect_error(cli("trial", run, "--out", str(tmp_path / "y.png")), "--out")


def test_trial_summary_and_plot_from_s3(cli, smdebug_runs, moto_server, tmp_path):
    """An s3:// trial (moto's real S3 server) gives the same summary and a plot."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=moto_server, region_name="us-west-2")
    bucket = "cli-trial-s3"
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    root = smdebug_runs / "sample_run"
    for path in root.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), bucket, f"job/debug-output/{path.relative_to(root)}")
    env = {"AWS_ENDPOINT_URL": moto_server}
    uri = f"s3://{bucket}/job/debug-output"
    proc = cli("trial", uri, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert {m["mode"]: m["steps"] for m in summary["modes"]} == {"TRAIN": [0, 1, 2, 3, 4, 5], "EVAL": [0, 1]}
    plot = cli("trial", uri, "--plot", "CrossEntropyLoss_output_0", "--out", str(tmp_path / "s3.png"), env=env)
    assert plot.returncode == 0, plot.stderr
    assert _png_size(tmp_path / "s3.png")[0] > 100
    missing = cli("trial", f"s3://{bucket}/nothing-here", env=env)
    assert missing.returncode == 2 and "nothing-here" in missing.stderr and "Traceback" not in missing.stderr


def test_trial_plot_without_data_is_one_line(cli, expect_error, smdebug_runs, tmp_path):
    """A tensor saved only as other reductions cannot be plotted: one line naming tensor and reduction."""
    proc = cli(
        "trial",
        str(smdebug_runs / "sample_run"),
        "--plot",
        "relu_output_0",
        "--reduction",
        "variance",
        "--out",
        str(tmp_path / "v.png"),
    )
    expect_error(proc, "relu_output_0", "variance")
    assert not (tmp_path / "v.png").exists()
