"""Reading a trial from S3 (moto's HTTP server on 127.0.0.1), ours against smdebug 1.0.34's S3 reader.

Workload: a 2-worker, 2,000-step trial (5 float32 tensors of 100 values per step and worker,
written by our ``StepWriter``, byte-compatible with smdebug's), uploaded to a moto server run
as its own process. Each reader does ``create_trial("s3://...")`` and then reads every value of
every tensor, step by step, for both workers. smdebug runs ``smdebug_format_baseline.py read``
in ``.venv-smdebug`` against the same bucket in the same run. ``s3_reader_vs_smdebug`` is
smdebug's total time divided by ours (higher is better; the issue's goal is >= 5).

smdebug's S3 reader lists the whole ``events/`` prefix before every value it reads
(``S3IndexReader.fetch_tensor_value`` -> ``_is_event_file_present`` -> ``list_event_files``):
at 2,000 steps and 2 workers that is one 4-page LIST of 4,000 keys per value, 20,000 times, so
its time grows with the square of the steps (profiled at 20 steps: 205 of its 446 requests were
LISTs, 10.8 s of its 14.2 s in botocore; at 2,000 steps one listing of ``events/`` from moto's
server took about 40 s under a load of 28, a one-step prefix 0.6 s). It therefore gets a deadline
(``BENCH_S3_READER_SMDEBUG_DEADLINE_S``, default 3600 s): stopped there, the run records how many
steps it read in how long (``s3_reader_smdebug_steps_read``, ``s3_reader_smdebug_read_s``), its
rate, and ``s3_reader_vs_smdebug_at_least`` (the time smdebug ran without finishing, over ours'
total), never an extrapolated total.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sagemaker_debugger_ext.format import StepWriter, write_collections_file, write_training_end
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.trials import create_trial

# BENCH_S3_READER_STEPS shortens the run (smdebug's reader needs over 13 minutes for 2,000 steps
# against moto's server on a loaded 2-core machine); the figure names the steps it was measured on.
STEPS = int(os.environ.get("BENCH_S3_READER_STEPS") or 2000)
SMDEBUG_DEADLINE_S = float(os.environ.get("BENCH_S3_READER_SMDEBUG_DEADLINE_S") or 3600)
WORKERS, TENSORS, SIZE = 2, 5, 100
REPO = Path(__file__).resolve().parent.parent
SMDEBUG_PY = REPO / ".venv-smdebug" / "bin" / "python"
BASELINE = Path(__file__).resolve().parent / "smdebug_format_baseline.py"
BUCKET, PREFIX = "s3-reader-bench", "trial"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write(root: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=SIZE).astype(np.float32) for _ in range(TENSORS)]
    for step in range(STEPS):
        for worker in range(WORKERS):
            with StepWriter(root, global_step=step, worker=f"worker_{worker}", mode=ModeKeys.TRAIN,
                            mode_step=step) as writer:  # fmt: skip
                for i, array in enumerate(arrays):
                    writer.write_tensor(f"layer{i}/weight", array)
    for worker in range(WORKERS):
        write_collections_file(root, f"worker_{worker}", {}, WORKERS)
    write_training_end(root)


def _upload(root: Path, s3: object) -> int:
    from concurrent.futures import ThreadPoolExecutor

    files = [p for p in root.rglob("*") if p.is_file()]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda p: s3.upload_file(str(p), BUCKET, f"{PREFIX}/{p.relative_to(root)}"), files))  # type: ignore[attr-defined]
    return len(files)


def _ours(uri: str) -> dict[str, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    trial = create_trial(uri)
    t1 = time.perf_counter()
    tensors = [trial.tensor(n) for n in trial.tensor_names()]
    workers = sorted(trial.workers())
    count = 0
    for step in trial.steps():
        for tensor in tensors:
            for worker in workers:
                tensor.value(step, worker=worker)
                count += 1
    t2 = time.perf_counter()
    if count != STEPS * TENSORS * WORKERS:
        msg = f"read {count} values, expected {STEPS * TENSORS * WORKERS}"
        raise RuntimeError(msg)
    return {"create_trial_s": t1 - t0, "read_s": t2 - t1, "read_cpu_s": time.process_time() - c0}


def run() -> dict[str, object]:
    if not SMDEBUG_PY.exists():
        return {"s3_reader_vs_smdebug_skipped": "no .venv-smdebug (make smdebug-venv)"}
    import boto3

    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    saved = {
        k: os.environ.get(k)
        for k in ("AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")
    }
    os.environ.update(AWS_ENDPOINT_URL_S3=endpoint, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                      AWS_REGION="us-east-1")  # fmt: skip
    try:
        s3 = boto3.client("s3", region_name="us-east-1")
        deadline = time.monotonic() + 60
        while True:
            try:
                s3.create_bucket(Bucket=BUCKET)
                break
            except Exception:  # the server is still starting
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with tempfile.TemporaryDirectory(prefix="bench-s3-") as work:
            _write(Path(work))
            objects = _upload(Path(work), s3)
        uri = f"s3://{BUCKET}/{PREFIX}"
        ours = _ours(uri)
        print(f"   ours: {ours}", flush=True)
        theirs = _smdebug(uri)
    finally:
        server.terminate()
        server.wait(timeout=30)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    ours_total = ours["create_trial_s"] + ours["read_s"]
    theirs_total = theirs["create_trial_s"] + theirs["read_s"]
    out: dict[str, object] = {
        "s3_reader_steps": STEPS,
        "s3_reader_objects": objects,
        "s3_reader_ours_s": round(ours_total, 3),
        "s3_reader_ours_create_trial_s": round(ours["create_trial_s"], 3),
        "s3_reader_smdebug_create_trial_s": round(theirs["create_trial_s"], 3),
    }
    # Keys of the other outcome are null, so results.json never mixes this run with an older one's.
    unfinished = ("s3_reader_smdebug_unfinished_after_s", "s3_reader_smdebug_steps_read", "s3_reader_smdebug_read_s",
                  "s3_reader_smdebug_steps_per_s", "s3_reader_vs_smdebug_at_least")  # fmt: skip
    if theirs["steps_read"] == STEPS:
        out["s3_reader_smdebug_s"] = round(theirs_total, 3)
        out["s3_reader_vs_smdebug"] = round(theirs_total / ours_total, 2)
        return {**out, **dict.fromkeys(unfinished)}
    out.update({"s3_reader_smdebug_s": None, "s3_reader_vs_smdebug": None})
    out.update({
        "s3_reader_smdebug_unfinished_after_s": round(theirs["elapsed_s"], 1),
        "s3_reader_smdebug_steps_read": int(theirs["steps_read"]),
        "s3_reader_smdebug_read_s": round(theirs["read_s"], 1),
        "s3_reader_smdebug_steps_per_s": round(theirs["steps_read"] / theirs["read_s"], 4) if theirs["read_s"] else 0.0,
        "s3_reader_vs_smdebug_at_least": round(theirs["elapsed_s"] / ours_total, 2),
    })  # fmt: skip
    return out


def _smdebug(uri: str) -> dict[str, float]:
    """Run smdebug's reader until it ends or the deadline; how far it got, from its progress lines."""
    env = {**os.environ, "SMDEBUG_LOG_LEVEL": "error"}
    with tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([str(SMDEBUG_PY), str(BASELINE), "read", uri], stdout=subprocess.PIPE,
                                stderr=err, text=True, env=env)  # fmt: skip
        try:
            stdout, _ = proc.communicate(timeout=SMDEBUG_DEADLINE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, _ = proc.communicate()
        elapsed = time.perf_counter() - t0
        err.seek(0)
        progress = [line.split() for line in err if line.startswith("progress ")]
    if proc.returncode == 0:
        result = json.loads(stdout.strip().splitlines()[-1])
        return {**result, "steps_read": STEPS, "elapsed_s": elapsed}
    if proc.returncode != -9:
        msg = f"smdebug's reader failed with exit code {proc.returncode}"
        raise RuntimeError(msg)
    done, create_s, read_s = (
        (int(progress[-1][1]), float(progress[-1][2]), float(progress[-1][3])) if progress else (0, 0.0, 0.0)
    )
    print(f"   smdebug stopped at the {SMDEBUG_DEADLINE_S:g} s deadline after {done} of {STEPS} steps", flush=True)
    return {"create_trial_s": create_s, "read_s": read_s, "steps_read": done, "elapsed_s": elapsed}
