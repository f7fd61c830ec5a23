"""smdebug's ``core.utils`` helpers that user scripts and smdebug's own test helpers call."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sagemaker_debugger_ext.core.utils import is_s3, make_numpy_array, remove_file_if_exists
from sagemaker_debugger_ext.exceptions import SMDebugTypeError


def test_remove_file_if_exists(tmp_path: Path) -> None:
    """The file is removed when it exists; a missing file is not an error."""
    target = tmp_path / "config.json"
    target.write_text("{}")
    remove_file_if_exists(target)
    assert not target.exists()
    remove_file_if_exists(target)  # already gone: nothing happens


def test_is_s3_and_make_numpy_array() -> None:
    """``is_s3`` splits bucket and key as smdebug's does; ``make_numpy_array`` refuses unknown types."""
    assert is_s3("s3://bucket/some/key") == (True, "bucket", "some/key")
    assert is_s3("/local/path")[0] is False
    smdebug_1_0_34 = {  # measured with smdebug 1.0.34's smdebug.core.utils.is_s3
        "s3://": (True, "", ""), "s3://b": (True, "b", ""), "s3://b/": (True, "b", ""),
        "s3:///k": (True, "", "k"), "s3://b/k/x": (True, "b", "k/x"), "S3://b/k": (False, None, None),
        "file:///x": (False, None, None),
    }  # fmt: skip
    assert {uri: is_s3(uri) for uri in smdebug_1_0_34} == smdebug_1_0_34
    assert make_numpy_array(3.0).shape == (1,)
    np.testing.assert_array_equal(make_numpy_array([1, 2]), np.array([1, 2]))
    with pytest.raises(SMDebugTypeError):
        make_numpy_array(object())
