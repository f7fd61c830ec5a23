"""One collections-file parser (issue 29 item 2): the trial and smdebug's ``CollectionManager``
(``core.collection_manager``) read a file through ``trials._collections.parse_collections_document``.

The same documents go through both surfaces and through real smdebug 1.0.34's
``CollectionManager.load_from_string``: accepted by one surface iff by the other, with the same
collections and worker count, and the shim's errors are smdebug's (class, and message where
smdebug wrote one).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from smdebug_reference import smdebug_json

from sagemaker_debugger_ext.core.collection_manager import CollectionManager
from sagemaker_debugger_ext.exceptions import IndexReaderException
from sagemaker_debugger_ext.trials._collections import parse_collections_file

_A = {"name": "a", "include_regex": ["relu.*"], "tensor_names": ["t1", "t0"], "save_histogram": False}
DOCS = {
    "valid": {"collections": {"a": _A, "b": {"name": "b"}}, "_meta": {"num_workers": 2}},
    "extra_key": {"collections": {"a": _A}, "_meta": {"num_workers": 1}, "version": 2},
    "extra_key_and_bad_body": {"collections": {"a": 5}, "_meta": {}, "x": 1},
    "meta_not_dict": {"collections": {"a": _A}, "_meta": 3},
    "meta_null": {"collections": {}, "_meta": None},
    "missing_collections": {"_meta": {"num_workers": 1}},
    "missing_meta": {"collections": {"a": _A}},
    "body_not_dict": {"collections": {"a": 5}, "_meta": {"num_workers": 1}},
}
# Where smdebug's CollectionManager has its own message, ours is the same text.
SAME_MESSAGE = {
    "extra_key",
    "extra_key_and_bad_body",
    "meta_not_dict",
    "meta_null",
    "missing_collections",
    "missing_meta",
}

ORACLE = """
import json, sys
from smdebug.core.collection_manager import CollectionManager
out = {}
for name, text in json.loads(sys.argv[1]).items():
    try:
        cm = CollectionManager.load_from_string(text)
    except Exception as exc:
        out[name] = ["error", type(exc).__name__, str(exc)]
    else:
        colls = {n: [c.name, list(c.include_regex or []), sorted(c.tensor_names), c.save_histogram]
                 for n, c in cm.collections.items()}
        out[name] = ["ok", colls, cm.get_num_workers()]
print(json.dumps(out))
"""


def _ours(text: str) -> list:
    try:
        cm = CollectionManager.load_from_string(text)
    except Exception as exc:
        return ["error", type(exc).__name__, str(exc)]
    assert cm is not None
    colls = {n: [c.name, list(c.include_regex or []), sorted(c.tensor_names), c.save_histogram] for n, c in cm.collections.items()}  # fmt: skip
    return ["ok", colls, cm.get_num_workers()]


def _trial(text: str) -> list:
    try:
        colls, workers = parse_collections_file(text.encode(), "worker_0_collections.json")
    except IndexReaderException as exc:
        return ["error", str(exc)]
    return ["ok", {n: [c.name, list(c.include_regex or []), sorted(c.tensor_names), c.save_histogram] for n, c in colls.items()}, workers]  # fmt: skip


@pytest.fixture(scope="module")
def smdebug_results(smdebug_python: Path) -> dict:
    texts = json.dumps({name: json.dumps(doc) for name, doc in DOCS.items()})
    return smdebug_json(smdebug_python, ORACLE, texts)


@pytest.mark.parametrize("name", sorted(DOCS))
def test_shim_same_as_smdebug(smdebug_results: dict, name: str) -> None:
    """The shim accepts what smdebug 1.0.34 accepts, with the same collections, and raises its error class."""
    ref, ours = smdebug_results[name], _ours(json.dumps(DOCS[name]))
    assert ours[:2] == ref[:2]
    if ref[0] == "ok" or name in SAME_MESSAGE:
        assert ours == ref


@pytest.mark.parametrize("name", sorted(DOCS))
def test_trial_and_shim_agree(name: str) -> None:
    """One parser: a file both surfaces can read gives the same collections and worker count;
    a malformed one is refused by both (the trial alone reads a file without a key as empty/one worker)."""
    text = json.dumps(DOCS[name])
    ours, trial = _ours(text), _trial(text)
    if name.startswith("missing_"):
        assert ours[:2] == ["error", "KeyError"] and trial[0] == "ok"
    elif ours[0] == "ok":
        assert trial == ours
    else:
        assert trial[0] == "error" and "is malformed" in trial[1]


def test_extra_keys_refused_by_the_trial(tmp_path: Path) -> None:
    """The disagreement the fold removed: the trial read a file with extra top-level keys that smdebug's
    CollectionManager (and so smdebug's trial) refuses."""
    with pytest.raises(IndexReaderException, match=r"top-level keys \['version'\] not allowed"):
        parse_collections_file(json.dumps(DOCS["extra_key"]).encode(), "k")


def test_shim_none_and_dict_input() -> None:
    """``load_from_string(None | "None")`` is None and a dict is taken as parsed (smdebug's load_json_as_dict)."""
    assert CollectionManager.load_from_string(None) is None and CollectionManager.load_from_string("None") is None
    cm = CollectionManager.load_from_string(DOCS["valid"])
    assert cm is not None and sorted(cm.collections) == ["a", "b"] and cm.get_num_workers() == 2


def test_meta_keys_survive_export_and_load(tmp_path: Path) -> None:
    """``_meta`` keys set with ``update_meta`` are written by ``export`` and read back by both surfaces
    (the writer kept only ``num_workers``)."""
    cm = CollectionManager()
    cm.add("losses")
    cm.update_meta({"num_workers": 3, "job": "j1"})
    cm.export(str(tmp_path), "worker_0_collections.json")
    path = tmp_path / "collections/000000000/worker_0_collections.json"
    loaded = CollectionManager.load(path)
    assert loaded is not None and loaded._meta == {"num_workers": 3, "job": "j1"} and loaded == cm
    assert parse_collections_file(path.read_bytes(), "k")[1] == 3
