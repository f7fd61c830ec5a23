"""Bring a job's code and input channels onto the local disk (``file://`` used in place)."""

from __future__ import annotations

import tarfile
from pathlib import Path
from urllib.parse import urlparse

from ..._exceptions import LocalJobInputError
from ...format import safe_join
from ...storage import open_storage
from ..store._job_spec import JobSpec, local_path_of

__all__ = ["extract_bundle", "fetch_channels", "fetch_code"]


def _download_prefix(uri: str, dest: Path) -> Path:
    store = open_storage(uri)
    dest.mkdir(parents=True, exist_ok=True)
    found = False
    for key in store.list(""):
        found = True
        target = safe_join(dest, key)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(store.read(key))
    if not found:
        # A single object: the URI names a file, not a prefix.
        parsed = urlparse(uri)
        parent, _, name = uri.rpartition("/")
        single = open_storage(parent)
        target = dest / (name or Path(parsed.path).name)
        target.write_bytes(single.read(name))
    return dest


def fetch_code(spec: JobSpec, job_root: Path) -> Path:
    """Local folder holding the entry point (``sourcedir.tar.gz`` from S3 is unpacked)."""
    if spec.algorithm_version is not None:  # a built-in algorithm: no code
        (job_root / "code").mkdir(parents=True, exist_ok=True)
        return job_root / "code"
    if spec.driver is not None and not spec.submit_dir:  # a ModelTrainer command without source_dir
        (job_root / "code").mkdir(parents=True, exist_ok=True)
        return job_root / "code"
    local = local_path_of(spec.submit_dir)
    if local is not None:
        return local
    dest = job_root / "code"
    if spec.driver is not None:  # ModelTrainer's "code" channel: the source_dir's files under a prefix
        return _download_prefix(spec.submit_dir, dest)
    parent, _, name = spec.submit_dir.rpartition("/")
    tar_path = job_root / "sourcedir.tar.gz"
    tar_path.write_bytes(open_storage(parent).read(name))
    extract_bundle(tar_path, dest, source=spec.submit_dir)
    return dest


def extract_bundle(tar_path: Path, dest: Path, *, source: str) -> None:
    """Unpack the source bundle ``tar_path`` (downloaded from ``source``) into ``dest``.

    Python's ``data`` filter refuses members that are absolute, contain ``..``, or are
    links pointing outside ``dest`` (and device files).

    Raises:
        LocalJobInputError: a refused member (named, with the archive), or not a tar archive.
    """
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(tar_path) as tar:
            tar.extractall(dest, filter="data")
    except tarfile.FilterError as exc:
        member = exc.tarinfo.name if exc.tarinfo is not None else "?"
        msg = f"source bundle {source} holds member {member!r} that may not be unpacked: {exc}"
        raise LocalJobInputError(msg) from None
    except tarfile.TarError as exc:
        msg = f"source bundle {source} is not a readable tar.gz archive: {exc}"
        raise LocalJobInputError(msg) from None


def fetch_channels(spec: JobSpec, job_root: Path) -> dict[str, Path]:
    """Channel name -> local file or folder."""
    out: dict[str, Path] = {}
    for channel in spec.channels:
        local = local_path_of(channel.uri)
        if local is not None:
            out[channel.name] = local
        else:
            out[channel.name] = _download_prefix(channel.uri, job_root / "channels" / channel.name)
    return out
