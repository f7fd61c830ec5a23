"""Regenerate the report screenshots of docs/reports.md (docs/images/report-*.png).

Runs two real local jobs (``docs/_screenshot_jobs/``: a PyTorch regression that diverges, an
XGBoost model that leans on two features), writes their reports with
``write_local_job_reports`` and photographs each page with headless Chromium (Debian's
``chromium`` package). Not run by the tests; run it from the source tree::

    .venv/bin/python docs/_screenshots.py [--work DIR]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageChops

HERE = Path(__file__).resolve().parent
JOBS = HERE / "_screenshot_jobs"
IMAGES = HERE / "images"
WIDTH = 1280
SHOT_WIDTH = 1000  # pixels of the committed image


def _estimator(script: str, rules: list[Any], out: Path, **kw: Any) -> Any:
    from sagemaker_debugger_ext import Estimator
    from sagemaker_debugger_ext.cli._run import LOCAL_ROLE

    return Estimator(
        image_uri="local",
        role=LOCAL_ROLE,
        instance_type="local",
        instance_count=1,
        entry_point=str(JOBS / script),
        rules=rules,
        output_path=out.as_uri(),
        **kw,
    )


def run_jobs(out: Path) -> dict[str, str]:
    """Run both jobs; returns ``{"torch": job_name, "xgboost": job_name}``."""
    from sagemaker_debugger_ext import CollectionConfig, FrameworkProfile, ProfilerConfig, Rule, rule_configs

    every = {"save_interval": "1"}
    torch_rules = [
        Rule.sagemaker(rule_configs.exploding_tensor(), collections_to_save=[CollectionConfig("losses", every)]),
        Rule.sagemaker(rule_configs.loss_not_decreasing(), collections_to_save=[CollectionConfig("losses", every)]),
        Rule.sagemaker(rule_configs.weight_update_ratio(), collections_to_save=[CollectionConfig("weights", every)]),
        Rule.sagemaker(rule_configs.vanishing_gradient(), collections_to_save=[CollectionConfig("gradients", every)]),
    ]
    torch_job = _estimator(
        "train_torch.py",
        torch_rules,
        out,
        base_job_name="diverging",
        profiler_config=ProfilerConfig(system_monitor_interval_millis=100, framework_profile_params=FrameworkProfile()),
    )
    torch_job.fit(logs="None")
    xgb_rules = [
        Rule.sagemaker(
            rule_configs.feature_importance_overweight(),
            collections_to_save=[CollectionConfig("feature_importance", {"save_interval": "5"})],
        ),
        Rule.sagemaker(rule_configs.create_xgboost_report()),
    ]
    xgb_job = _estimator("train_xgboost.py", xgb_rules, out, base_job_name="xgboost-lean")
    xgb_job.fit(logs="None")
    return {"torch": torch_job.latest_training_job.name, "xgboost": xgb_job.latest_training_job.name}


def screenshot(html: Path, png: Path, *, height: int = 6000) -> Path:
    """Photograph ``html`` with headless Chromium, cut the blank bottom, scale to SHOT_WIDTH, save ``png``."""
    with tempfile.TemporaryDirectory() as profile, tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.png"
        subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={WIDTH},{height}",
                f"--screenshot={raw}",
                html.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        image = Image.open(raw).convert("RGB")
    box = ImageChops.difference(image, Image.new("RGB", image.size, "white")).getbbox()
    if box is not None:
        image = image.crop((0, 0, image.width, min(image.height, box[3] + 24)))
    image = image.resize((SHOT_WIDTH, round(image.height * SHOT_WIDTH / image.width)), Image.Resampling.LANCZOS)
    image.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(png, optimize=True)
    return png


def main() -> None:
    """Run the jobs, write the reports, take the screenshots."""
    from sagemaker_debugger_ext.reports import write_local_job_reports

    logging.getLogger("sagemaker").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="keep the jobs and reports in this folder")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="report-shots-"))
    work.mkdir(parents=True, exist_ok=True)
    jobs = run_jobs(work / "out")
    IMAGES.mkdir(exist_ok=True)
    torch_reports = write_local_job_reports(jobs["torch"], work / "torch-report")
    xgb_reports = write_local_job_reports(jobs["xgboost"], work / "xgboost-report")
    shots = {
        "report-job.png": torch_reports[0],
        "report-profiler.png": torch_reports[1],
        "report-job-xgboost.png": xgb_reports[0],
        "report-xgboost.png": next((work / "out" / jobs["xgboost"] / "rule-output").rglob("xgboost_report.html")),
    }
    for name, html in shots.items():
        print(screenshot(html, IMAGES / name))
    if args.work is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
