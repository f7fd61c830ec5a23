"""Record what the real SageMaker Python SDK v2 ``Estimator`` sends for the ModelTrainer payload test.

Run with the v2 venv (``.venv`` has sagemaker 2.x), from the repository root:

    PYTHONHASHSEED=0 .venv/bin/python tests/train/golden/record_v2_golden.py

It builds ``sagemaker.estimator.Estimator`` with ``sagemaker.debugger``'s objects (a hook with a
``weights`` collection, VanishingGradient, ProfilerReport, a 500 ms profiler config), calls
``fit()`` and captures the CreateTrainingJob body on the wire (botocore's ``before-send``), then
stops before anything is sent. The Debugger fields of that body are written, in the order they
were sent, to ``v2_estimator_debugger_fields.json`` beside this script. No AWS call is made.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import boto3

os.environ.setdefault("AWS_ACCESS_KEY_ID", "golden")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "golden")

import sagemaker
from sagemaker.debugger import (
    CollectionConfig,
    DebuggerHookConfig,
    ProfilerConfig,
    ProfilerRule,
    Rule,
    rule_configs,
)
from sagemaker.estimator import Estimator

OUT = Path(__file__).with_name("v2_estimator_debugger_fields.json")
FIELDS = ("DebugHookConfig", "DebugRuleConfigurations", "TensorBoardOutputConfig", "ProfilerConfig",
          "ProfilerRuleConfigurations")  # fmt: skip
INPUTS = {
    "region": "us-west-2",
    "image_uri": "123456789012.dkr.ecr.us-west-2.amazonaws.com/my-training:latest",
    "role": "arn:aws:iam::123456789012:role/SageMakerRole",
    "instance_type": "ml.m5.xlarge",
    "output_path": "s3://golden-bucket/output",
    "job_name": "golden-model-trainer",
}


class _Captured(Exception):
    pass


def main() -> None:
    logging.getLogger("sagemaker.telemetry.telemetry_logging").setLevel(logging.CRITICAL)  # offline: no traceback
    session = sagemaker.Session(
        boto_session=boto3.Session(region_name=INPUTS["region"]), default_bucket="golden-bucket"
    )
    body: dict[str, bytes] = {}

    def grab(request, **_):  # type: ignore[no-untyped-def]
        body["json"] = request.body
        raise _Captured

    session.sagemaker_client.meta.events.register("before-send.sagemaker.CreateTrainingJob", grab)
    estimator = Estimator(
        image_uri=INPUTS["image_uri"],
        role=INPUTS["role"],
        instance_count=1,
        instance_type=INPUTS["instance_type"],
        output_path=INPUTS["output_path"],
        sagemaker_session=session,
        debugger_hook_config=DebuggerHookConfig(
            collection_configs=[CollectionConfig(name="weights", parameters={"save_interval": "5"})]
        ),
        rules=[
            Rule.sagemaker(rule_configs.vanishing_gradient()),
            ProfilerRule.sagemaker(rule_configs.ProfilerReport()),
        ],
        profiler_config=ProfilerConfig(system_monitor_interval_millis=500),
    )
    try:
        estimator.fit(job_name=INPUTS["job_name"], wait=False)
    except _Captured:
        pass
    sent = json.loads(body["json"])
    record = {
        "recorded_with": f"sagemaker {sagemaker.__version__} (SDK v2), {Path(__file__).name}, PYTHONHASHSEED="
        f"{os.environ.get('PYTHONHASHSEED')}",
        "inputs": INPUTS,
        "fields": {key: sent[key] for key in FIELDS if key in sent},
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
