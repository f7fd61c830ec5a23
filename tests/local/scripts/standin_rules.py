"""Stand-in rule-container module for local-mode tests (CONTRACTS §E flags).

Rule names: 'NaNStop' (IssuesFound + stop file at the first NaN 'loss'), 'Crash' (raises),
anything else: NoIssuesFound at the end of training. It follows the trial as a rule container
does: it polls for new event files every 20 ms until the end-of-training marker appears, and
gives up with an Error status after ``STANDIN_RULE_DEADLINE_S`` (default 300) seconds without it.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


def _atomic(path, data):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _status(path, status, details=""):
    _atomic(path, {"RuleEvaluationStatus": status, "StatusDetails": details, "LastModifiedTime": time.time()})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd")
    for flag in (
        "--trial-path",
        "--rule-name",
        "--rule-parameters-file",
        "--output-dir",
        "--status-file",
        "--stop-file",
    ):
        p.add_argument(flag)
    a = p.parse_args()
    params = json.loads(Path(a.rule_parameters_file).read_text())
    _status(a.status_file, "InProgress")
    if a.rule_name.startswith("Crash"):
        raise SyntaxError("bad rule source")
    from sagemaker_debugger_ext.format import decode_tensor_record, read_records

    trial = Path(a.trial_path)
    seen = set()
    fired = False
    deadline = time.monotonic() + float(os.environ.get("STANDIN_RULE_DEADLINE_S", "300"))
    while True:
        ended = (trial / "training_job_end.ts").exists()
        if not ended and time.monotonic() > deadline:
            _status(a.status_file, "Error", "no end-of-training marker before the stand-in's deadline")
            return 1
        for f in sorted(trial.glob("events/*/*.tfevents")):
            if f in seen:
                continue
            seen.add(f)
            for rec in read_records(f.read_bytes()):
                t = decode_tensor_record(rec.payload)
                arr = t.value
                if a.rule_name.startswith("NaN") and not fired and np.isnan(np.asarray(arr, dtype=float)).any():
                    fired = True
                    (Path(a.output_dir) / "fired.txt").write_text(str(f))
                    _status(a.status_file, "IssuesFound", f"NaN in {f.name}")
                    if a.stop_file and params.get("stop", "true") == "true":
                        _atomic(a.stop_file, {"RuleConfigurationName": a.rule_name, "Reason": f"NaN found in {f.name}"})
        if ended:
            break
        time.sleep(0.02)  # the poll interval of the loop above, bounded by its deadline
    (Path(a.output_dir) / "report.json").write_text(json.dumps({"files": len(seen), "params": params}))
    if not fired:
        _status(a.status_file, "NoIssuesFound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
