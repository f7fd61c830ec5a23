"""The self-hosted launcher under torchrun: one launcher per rank, one leader per host.

Real ``torch.distributed.run`` starts the bundle's real ``sagemaker_debugger_ext_launch.py``
twice, as the training toolkit does for ``torch_distributed`` / ``Torchrun()``; the destination is
a local folder (the launcher's sync takes any storage URI). Rank 1's script ends well after rank
0's: the end-of-training marker must not reach the destination before rank 1's last file.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sagemaker_debugger_ext.cloud._bundle import LAUNCH_SCRIPT, bundle_files
from sagemaker_debugger_ext.cloud._host_group import HostGroup, JobHosts
from sagemaker_debugger_ext.cloud._self_hosted import bundle_config

REPO = Path(__file__).resolve().parents[2]
JOB = "ddp-job"
MARKER = "training_job_end.ts"

ENTRY = r"""
import json, os, sys, time
from pathlib import Path

rank = int(os.environ["RANK"])
out = Path(json.loads(Path(os.environ["SMDEBUG_CONFIG_FILE_PATH"]).read_text())["LocalPath"])
(out / "ranks").mkdir(parents=True, exist_ok=True)
if rank == 0:
    (out / "ranks" / "rank0.txt").write_text("0")
    sys.exit(0)
end = time.monotonic() + 2.0  # workload: rank 1 trains on, well after rank 0's script (which exits at once)
x = 0
while time.monotonic() < end:
    x += 1
(out / "ranks" / "rank1.txt").write_text("1")
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_torchrun_ranks_share_one_leader_whose_end_marker_waits_for_every_rank(tmp_path: Path) -> None:
    code, dest = tmp_path / "code", tmp_path / "s3"
    hook = {"S3OutputPath": str(dest), "HookParameters": {"save_interval": "1"}}
    for name, data in bundle_files(config=bundle_config("entry.py", JOB, hook, None), requirement="x").items():
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        (code / name).write_bytes(data)
    (code / "entry.py").write_text(ENTRY)
    container = tmp_path / "opt-ml"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "SM_OUTPUT_DIR": str(container / "output"),
        "TRAINING_JOB_NAME": JOB,
        "SAGEMAKER_DEBUGGER_EXT_SYNC_SECONDS": "0.1",
    }
    debug_output = dest / JOB / "debug-output"
    seen_at_marker: list[set[str]] = []
    done = threading.Event()

    def watch() -> None:  # what the destination held when the marker first appeared there
        while not done.is_set() and not seen_at_marker:
            if (debug_output / MARKER).exists():
                seen_at_marker.append({p.relative_to(debug_output).as_posix() for p in debug_output.rglob("*")})
            done.wait(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
         "--master_addr=127.0.0.1", f"--master_port={_free_port()}", str(code / LAUNCH_SCRIPT)],
        env=env, cwd=code, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    done.set()
    watcher.join(timeout=10)
    assert run.returncode == 0, run.stderr[-3000:]
    assert {"ranks/rank0.txt", "ranks/rank1.txt", MARKER} <= {
        p.relative_to(debug_output).as_posix() for p in debug_output.rglob("*")
    }
    assert seen_at_marker, "the marker never reached the destination while the job ran"
    assert "ranks/rank1.txt" in seen_at_marker[0], seen_at_marker[0]
    launchers = container / "sagemaker-debugger-ext" / "launchers"
    assert len(list(launchers.glob("*.ended"))) == 2 and list(launchers.glob("*.running")) == []


def test_one_leader_per_folder_which_waits_for_every_expected_launcher(tmp_path: Path) -> None:
    """The first group in a folder leads; a second one follows. The leader waits for launchers
    expected but not started yet and for running ones; a marker whose process is gone is not
    waited for; once stopping, no long wait; once the leader closes, the lead is free again."""
    folder = tmp_path / "launchers"
    first, second = HostGroup(folder, expected=3), HostGroup(folder)
    assert (first.leader, second.leader) == (True, False)
    assert first.waiting_for() == ["2 launcher(s) not started"]  # this process's own marker does not count
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (folder / f"{int(dead.stdout)}.running").touch()
    (folder / "notapid.running").touch()
    (folder / "12.txt").touch()
    assert first.waiting_for() == ["1 launcher(s) not started"]
    alive = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        (folder / f"{alive.pid}.running").touch()
        assert first.waiting_for() == [f"pid {alive.pid}"]
        stop = threading.Event()
        stop.set()
        assert first.wait_for_others(60.0, stop=stop, grace_s=0.0) == [f"pid {alive.pid}"]
        (folder / f"{alive.pid}.running").rename(folder / f"{alive.pid}.ended")
        assert first.wait_for_others(60.0) == []
    finally:
        alive.communicate(timeout=10)
    second.close()
    first.close()
    third = HostGroup(folder)
    assert third.leader
    third.close()


def test_expected_launchers_come_from_torchrun_only() -> None:
    """LOCAL_WORLD_SIZE counts only under torchrun: local mode sets it for its one process per host."""
    assert HostGroup.expected_from({"LOCAL_WORLD_SIZE": "4"}) == 1
    assert HostGroup.expected_from({"LOCAL_WORLD_SIZE": "4", "TORCHELASTIC_RUN_ID": "x"}) == 4
    assert HostGroup.expected_from({"LOCAL_WORLD_SIZE": "four", "TORCHELASTIC_RUN_ID": "x"}) == 1


def test_hosts_of_a_job_meet_beside_its_debug_output(tmp_path: Path) -> None:
    """Each host reports its end; the first host waits for all; one-host jobs and odd names opt out."""
    config = {"DebugHookConfig": {"S3OutputPath": str(tmp_path / "out")}}
    env = {"SM_HOSTS": '["algo-1", "algo-2"]', "SM_CURRENT_HOST": "algo-1"}
    first = JobHosts.of_job(config, env, JOB)
    second = JobHosts.of_job(config, {**env, "SM_CURRENT_HOST": "algo-2"}, JOB)
    assert first is not None and second is not None and (first.first, second.first) == (True, False)
    assert first.not_ended() == ["algo-1", "algo-2"]
    first.report_ended()
    stop = threading.Event()
    stop.set()
    assert first.wait_for_all(60.0, stop=stop, grace_s=0.0) == ["algo-2"]
    second.report_ended()
    assert first.wait_for_all(60.0) == []
    assert (tmp_path / "out" / JOB / "debugger-self-hosted" / "hosts" / "algo-2.ended").is_file()
    assert JobHosts.of_job(config, {**env, "SM_HOSTS": '["algo-1"]'}, JOB) is None
    assert JobHosts.of_job(config, {**env, "SM_HOSTS": '["algo-1", "../x"]'}, JOB) is None
    assert JobHosts.of_job(config, {**env, "SM_CURRENT_HOST": "algo-9"}, JOB) is None
    assert JobHosts.of_job({}, env, JOB) is None
