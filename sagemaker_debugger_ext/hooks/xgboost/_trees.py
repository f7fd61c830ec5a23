"""The ``trees/<column>`` tensors: one boosting round's trees as columns.

Columns and values follow ``Booster.trees_to_dataframe()`` (as smdebug's ``parse_tree_model``):
Tree, Node, ID, Feature, Split, Yes, No, Missing, Gain, Cover, Category; rows sorted by
node id. Built from the JSON dump, without pandas.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["round_trees"]


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children", ()):
        yield from _nodes(child)


def round_trees(booster: Any, iteration: int) -> dict[str, np.ndarray]:
    """The trees built in boosting round ``iteration`` as ``{column: array}``."""
    dump = booster.get_dump(with_stats=True, dump_format="json")
    rounds = max(int(booster.num_boosted_rounds()), 1)
    per_round = max(len(dump) // rounds, 1)
    rows: list[tuple[Any, ...]] = []
    first = iteration * per_round
    for tree_id in range(first, min(first + per_round, len(dump))):
        tree_rows = []
        for n in _nodes(json.loads(dump[tree_id])):
            nid = int(n["nodeid"])
            if "leaf" in n:
                tree_rows.append(
                    (
                        tree_id,
                        nid,
                        "Leaf",
                        np.nan,
                        "nan",
                        "nan",
                        "nan",
                        float(n["leaf"]),
                        float(n.get("cover", np.nan)),
                        "nan",
                    )
                )
                continue
            cats = n.get("categories")
            tree_rows.append(
                (
                    tree_id,
                    nid,
                    str(n["split"]),
                    float(n["split_condition"]) if "split_condition" in n and not cats else np.nan,
                    f"{tree_id}-{n['yes']}",
                    f"{tree_id}-{n['no']}",
                    f"{tree_id}-{n['missing']}",
                    float(n.get("gain", np.nan)),
                    float(n.get("cover", np.nan)),
                    str(cats) if cats else "nan",
                )
            )
        rows.extend(sorted(tree_rows, key=lambda r: r[1]))
    cols = list(zip(*rows, strict=True)) if rows else [()] * 10
    return {
        "Tree": np.array(cols[0], dtype=np.int64),
        "Node": np.array(cols[1], dtype=np.int64),
        "ID": np.array([f"{t}-{n}" for t, n in zip(cols[0], cols[1], strict=True)], dtype=np.str_),
        "Feature": np.array(cols[2], dtype=np.str_),
        "Split": np.array(cols[3], dtype=np.float64),
        "Yes": np.array(cols[4], dtype=np.str_),
        "No": np.array(cols[5], dtype=np.str_),
        "Missing": np.array(cols[6], dtype=np.str_),
        "Gain": np.array(cols[7], dtype=np.float64),
        "Cover": np.array(cols[8], dtype=np.float64),
        "Category": np.array(cols[9], dtype=np.str_),
    }
