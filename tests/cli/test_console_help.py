"""Every subcommand of the console script answers --help, and the parser lists them all."""

from __future__ import annotations

import pytest

from sagemaker_debugger_ext.cli import SUBCOMMANDS, build_parser

# (argv before --help, text the help must contain); the sub-actions' help (jobs list, rules run,
# ...) is rendered in process by tests/docs/test_docs_cli.py.
HELPS = [
    ((), "COMMAND"),
    (("demo",), "--lr"),
    (("run",), "--rule"),
    (("jobs",), "describe"),
    (("rules",), "list"),
    (("rules", "run"), "--param"),
    (("trial",), "--plot"),
    (("report",), "JOB_NAME_OR_PROFILER_PATH"),
    (("request",), "usage"),
]


def _available() -> set[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return set(action.choices)


def test_every_subcommand_is_in_the_parser():
    """Each subcommand the dispatcher names is in --help (a missing module fails build_parser)."""
    assert _available() == set(SUBCOMMANDS)


def test_a_missing_subcommand_module_fails(monkeypatch):
    """A subcommand whose module is missing is an error, never silently left out of --help."""
    monkeypatch.setitem(SUBCOMMANDS, "ghost", "._no_such_subcommand")
    with pytest.raises(ModuleNotFoundError, match="_no_such_subcommand"):
        build_parser()


@pytest.mark.parametrize(("argv", "needle"), HELPS, ids=[" ".join(a) or "top" for a, _ in HELPS])
def test_help(cli, argv, needle):
    """``--help`` exits 0 and describes the command's arguments."""
    proc = cli(*argv, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: sagemaker-debugger-ext")
    assert needle in proc.stdout
    assert proc.stderr == ""


def test_no_command_is_a_usage_error(cli):
    """Without a command the script prints usage and exits 2."""
    proc = cli()
    assert proc.returncode == 2
    assert "usage:" in proc.stderr and "Traceback" not in proc.stderr
