"""Suite-wide fixtures: no real AWS credentials or endpoints ever reach a test; the reference venvs; ``fires``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# Runs written by the real smdebug 1.0.34 PyTorch hook (tests/fixtures/smdebug_runs/make_sample_run.py
# wrote them), kept in the repository so a fresh clone runs every test that reads them.
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMDEBUG_RUNS = FIXTURES / "smdebug_runs"


@pytest.fixture(autouse=True)
def _fake_aws(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Fake credentials and region; no shared AWS config files; a private local job store."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SECURITY_TOKEN", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_HOME", str(tmp_path_factory.mktemp("sdx-home")))


@pytest.fixture(scope="session")
def smdebug_runs() -> Path:
    """The real smdebug-written runs in tests/fixtures (part of the repository: never skipped)."""
    return SMDEBUG_RUNS


@pytest.fixture(scope="session")
def smdebug_python() -> Iterator[Path]:
    """Python of the reference venv holding real smdebug 1.0.34 (``make smdebug-venv``)."""
    py = REPO_ROOT / ".venv-smdebug" / "bin" / "python"
    if not (REPO_ROOT / ".venv-smdebug" / ".installed").exists():
        pytest.skip("reference venv .venv-smdebug (smdebug 1.0.34) is not built; run `make smdebug-venv`")
    yield py


@pytest.fixture(scope="session")
def sdk3_python() -> Iterator[Path]:
    """Python of the venv holding SageMaker SDK v3 (``make sdk3-venv``): SDK v2 and v3 cannot share .venv."""
    py = REPO_ROOT / ".venv-sdk3" / "bin" / "python"
    if not (REPO_ROOT / ".venv-sdk3" / ".installed").exists():
        pytest.skip("venv .venv-sdk3 (SageMaker SDK v3) is not built; run `make sdk3-venv`")
    yield py


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """A real moto HTTP server on 127.0.0.1 (real S3 wire protocol); yields its endpoint URL.

    Tests that use it set ``AWS_ENDPOINT_URL`` themselves (monkeypatch) and create buckets
    with unique names, since the server is shared by the session.
    """
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def first_fire(rule: Any, end_step: int | None = None) -> int | None:
    """Global step at which ``rule`` first fires through ``invoke_rule``; None if never."""
    from sagemaker_debugger_ext.exceptions import NoMoreData, RuleEvaluationConditionMet
    from sagemaker_debugger_ext.rules import invoke_rule

    try:
        invoke_rule(rule, end_step=end_step, raise_eval_cond=True)
    except RuleEvaluationConditionMet as exc:
        return int(exc.step)
    except NoMoreData:
        return None
    return None


@pytest.fixture
def fires() -> Callable[..., int | None]:
    """``fires(rule)`` -> first firing step or None."""
    return first_fire
