"""XGBoost rules: FeatureImportanceOverweight, TreeDepth."""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np

from ...rule_contract._params import Kind, Param, fraction, non_negative, positive
from .._result import RuleResult
from ._base import BuiltinRule

__all__ = ["FeatureImportanceOverweight", "TreeDepth"]


class FeatureImportanceOverweight(BuiltinRule):
    """Normalises the feature importances of a step (tensors ``<regex>/<feature>``) to sum 1;
    fires when the ``nfeatures`` largest hold more than ``threshold`` of the total. Features
    seen at other steps but absent at this one count as 0; a model that uses ``nfeatures``
    or fewer features in all has a share of 1 and fires (meant for data with more features)."""

    DESCRIPTION = "the nfeatures largest normalised feature importances sum to more than threshold"
    PARAMETERS = (
        Param(name="threshold", kind=Kind.FLOAT, default=0.8, doc="allowed share of the top features", check=fraction),
        Param(name="nfeatures", kind=Kind.INT, default=3, doc="how many top features are summed", check=positive),
        Param(
            name="tensor_regex", kind=Kind.STR_LIST, default=[".*feature_importance/weight"], doc="importance tensors"
        ),
    )

    def evaluate(self, step: int) -> RuleResult:
        values: dict[str, float] = {}
        seen = False
        for name in self.select_tensors(regexes=self.p["tensor_regex"]):
            v = self.value_at(name, step)
            seen = seen or v is not None
            # features unused in this step's model keep importance 0
            values[name] = max(float(v.reshape(())), 0.0) if v is not None and v.size == 1 else 0.0
        total = sum(values.values())
        if not seen or total <= 0:
            return RuleResult.insufficient()
        top = sorted(values, key=values.__getitem__, reverse=True)[: self.p["nfeatures"]]
        share = sum(values[n] for n in top) / total
        if share > self.p["threshold"]:
            return RuleResult.met(
                self.finding(
                    step,
                    f"top {self.p['nfeatures']} of {len(values)} features ({', '.join(n.rsplit('/', 1)[-1] for n in top)}) hold {share:.3f} of the importance > threshold {self.p['threshold']:g}",
                    tensor=top[0],
                    value=share,
                    threshold=self.p["threshold"],
                )
            )
        return RuleResult.not_met()


class TreeDepth(BuiltinRule):
    """Depth of each tree = floor(log2(largest node id + 1)) from the ``trees/Node`` (and
    ``trees/Tree``) tensors; fires when the deepest tree is shallower than ``depth``
    (XGBoost rejected the splits, so the trees do not grow as deep as configured).

    ``window`` (an extension; 1, AWS: the trees saved at the step alone, one per boosting round):
    the deepest of the trees saved in the last ``window`` evaluated steps; 0: of every tree so
    far, the model's depth. A converging booster's late trees have few splits left to make (a
    healthy model's 60th tree had 15 nodes, its 58th 27), so one round's tree says little
    about the depth the model uses; a model whose splits are rejected is shallow from its first
    tree on."""

    DESCRIPTION = "the deepest tree, log2 of the largest node id, is shallower than depth"
    PARAMETERS = (
        Param(name="depth", kind=Kind.FLOAT, default=4.0, doc="expected tree depth", check=non_negative),
        Param(
            name="window",
            kind=Kind.INT,
            default=1,
            doc="judge the deepest tree of the last window steps (extension; 1: AWS, each step alone; 0: all so far)",
            check=non_negative,
        ),
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self._recent: collections.deque[int] = collections.deque()  # the deepest tree of each evaluated step

    def evaluate(self, step: int) -> RuleResult:
        node_names = self.select_tensors(regexes=[r"(.*/)?trees/Node$"])
        tree_names = self.select_tensors(regexes=[r"(.*/)?trees/Tree$"])
        nodes = self.value_at(node_names[0], step) if node_names else None
        if nodes is None or nodes.size == 0:
            return RuleResult.insufficient()
        nodes = nodes.ravel().astype(np.int64)
        trees = self.value_at(tree_names[0], step) if tree_names else None
        if trees is None or trees.size != nodes.size:
            trees = np.zeros_like(nodes)
        trees = trees.ravel().astype(np.int64)
        depths = {int(t): math.floor(math.log2(int(nodes[trees == t].max()) + 1)) for t in np.unique(trees)}
        self._recent.append(max(depths.values()))
        while self.p["window"] and len(self._recent) > self.p["window"]:
            self._recent.popleft()
        deepest = max(self._recent)
        if deepest < self.p["depth"]:
            what = f"of {len(depths)} trees" if self.p["window"] == 1 else f"tree of the last {len(self._recent)} steps"
            return RuleResult.met(
                self.finding(
                    step,
                    f"deepest {what} has depth {deepest} < depth {self.p['depth']:g}",
                    tensor=node_names[0],
                    value=deepest,
                    threshold=self.p["depth"],
                )
            )
        return RuleResult.not_met()
