"""A hostile source bundle is refused with the package's error naming archive and member (issue 16 item 9)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from sagemaker_debugger_ext._exceptions import LocalJobInputError
from sagemaker_debugger_ext.local.supervisor._inputs_fetch import extract_bundle

SOURCE = "s3://bucket/job/source/sourcedir.tar.gz"


def _bundle(tmp_path: Path, member: tarfile.TarInfo, data: bytes = b"") -> Path:
    path = tmp_path / "sourcedir.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        ok = tarfile.TarInfo("train.py")
        ok.size = 5
        tar.addfile(ok, io.BytesIO(b"pass\n"))
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data) if data else None)
    return path


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize(
    "member, data",
    [
        (tarfile.TarInfo("../escape.py"), b"x"),
        (_link("evil", "/etc/passwd", tarfile.SYMTYPE), b""),
        (_link("evil", "../../outside", tarfile.LNKTYPE), b""),
    ],
    ids=["dotdot", "symlink-out", "hardlink-out"],
)
def test_refused_member_names_archive_and_member(tmp_path: Path, member: tarfile.TarInfo, data: bytes) -> None:
    bundle = _bundle(tmp_path, member, data)
    with pytest.raises(LocalJobInputError, match=rf"source bundle {SOURCE} holds member '{member.name}'"):
        extract_bundle(bundle, tmp_path / "code", source=SOURCE)
    assert not (tmp_path / "escape.py").exists()


def test_not_a_tar_archive(tmp_path: Path) -> None:
    (tmp_path / "sourcedir.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(LocalJobInputError, match="not a readable tar.gz archive"):
        extract_bundle(tmp_path / "sourcedir.tar.gz", tmp_path / "code", source=SOURCE)


def test_a_clean_bundle_unpacks(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, tarfile.TarInfo("pkg/util.py"), b"X = 1\n")
    extract_bundle(bundle, tmp_path / "code", source=SOURCE)
    assert (tmp_path / "code" / "pkg" / "util.py").read_text() == "X = 1\n"


def test_absolute_member_lands_inside_the_code_folder(tmp_path: Path) -> None:
    """The data filter strips the leading '/': the file stays inside the destination."""
    bundle = _bundle(tmp_path, tarfile.TarInfo("/abs/inside.py"), b"x")
    extract_bundle(bundle, tmp_path / "code", source=SOURCE)
    assert (tmp_path / "code" / "abs" / "inside.py").exists()
