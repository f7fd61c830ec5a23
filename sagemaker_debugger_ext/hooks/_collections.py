"""Collections: named groups of tensors sharing a save schedule and reductions.

``Collection`` is mutable on purpose: smdebug scripts call
``hook.get_collection("x").include("regex")`` and set ``save_config`` on it. The hook
resolves every collection once, at its first step (``CollectionManager.prepare``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .._exceptions import HookConfigError, InvalidCollectionConfiguration, field_error_message
from ..format._include_regex import compile_include_regex, include_items, name_matches
from ..modes import ModeKeys
from ._reduction_config import ReductionConfig
from ._save_config import SaveConfig, SaveConfigMode

__all__ = [
    "GRADIENT_PREFIX",
    "NAMED_ONLY_COLLECTIONS",
    "NON_HISTOGRAM_COLLECTIONS",
    "PYTORCH_BUILTIN_REGEXES",
    "SCALAR_COLLECTIONS",
    "SCALAR_PREFIX",
    "TF_BUILTIN_REGEXES",
    "TRAIN_ONLY_COLLECTIONS",
    "XGBOOST_BUILTIN_REGEXES",
    "Collection",
    "CollectionKeys",
    "CollectionManager",
]


class CollectionKeys:
    """Names of smdebug's built-in collections (plus the activation collections rules use)."""

    DEFAULT = "default"
    ALL = "all"
    WEIGHTS = "weights"
    BIASES = "biases"
    GRADIENTS = "gradients"
    LOSSES = "losses"
    SCALARS = "scalars"
    METRICS = "metrics"
    SM_METRICS = "sm_metrics"
    OPTIMIZER_VARIABLES = "optimizer_variables"
    INPUTS = "inputs"
    OUTPUTS = "outputs"
    LAYERS = "layers"
    RELU_OUTPUT = "relu_output"
    RELU_INPUT = "relu_input"
    TANH_INPUT = "tanh_input"
    SIGMOID_INPUT = "sigmoid_input"
    HYPERPARAMETERS = "hyperparameters"
    PREDICTIONS = "predictions"
    LABELS = "labels"
    FEATURE_IMPORTANCE = "feature_importance"
    AVERAGE_SHAP = "average_shap"
    FULL_SHAP = "full_shap"
    TREES = "trees"
    LAYER_STATS = "layer_stats"


# Tensor-name prefixes of the hooks: a parameter's gradient, a value given to save_scalar().
GRADIENT_PREFIX = "gradient/"
SCALAR_PREFIX = "scalar/"

# Scalar-valued collections: always raw-only, never histograms (as smdebug 1.0.34).
SCALAR_COLLECTIONS = frozenset(
    {
        CollectionKeys.LOSSES,
        CollectionKeys.METRICS,
        CollectionKeys.FEATURE_IMPORTANCE,
        CollectionKeys.AVERAGE_SHAP,
        CollectionKeys.SM_METRICS,
        CollectionKeys.LAYER_STATS,
    }
)
NON_HISTOGRAM_COLLECTIONS = SCALAR_COLLECTIONS
# Never saved in EVAL / PREDICT.
# Not smdebug's: saved only when named (``save_all`` / "all" leave them out, as smdebug saves nothing like them).
NAMED_ONLY_COLLECTIONS = frozenset({CollectionKeys.LAYER_STATS})
TRAIN_ONLY_COLLECTIONS = frozenset(
    {CollectionKeys.GRADIENTS, CollectionKeys.OPTIMIZER_VARIABLES, CollectionKeys.LAYER_STATS}
)

_COMMON_REGEXES: dict[str, list[str]] = {
    CollectionKeys.ALL: [],
    CollectionKeys.DEFAULT: [],
    CollectionKeys.SCALARS: ["^scalar/"],
}
PYTORCH_BUILTIN_REGEXES: dict[str, list[str]] = {
    **_COMMON_REGEXES,
    CollectionKeys.WEIGHTS: ["^(?!gradient).*weight"],
    CollectionKeys.BIASES: ["^(?!gradient).*bias"],
    CollectionKeys.GRADIENTS: ["^gradient"],
    CollectionKeys.LOSSES: ["[Ll]oss_(?!input).*output"],
    CollectionKeys.RELU_OUTPUT: [".*relu_output"],
    CollectionKeys.RELU_INPUT: [".*relu_input"],
    CollectionKeys.TANH_INPUT: [".*tanh_input"],
    CollectionKeys.SIGMOID_INPUT: [".*sigmoid_input"],
    # not smdebug's: per-layer gradient norm and update ratio (hooks/pytorch/_layer_stats.py)
    CollectionKeys.LAYER_STATS: ["^layer_stats/"],
}
# TensorFlow/Keras (smdebug.tensorflow's names): weights and biases of Keras layers are
# ``<layer>/weights/<variable>:0``, of GradientTape runs ``weights/<variable>:0``; gradients
# ``gradients/<variable>Grad``. Metrics, layers, inputs/outputs and optimizer variables are
# members by name (the hook adds them), as in smdebug.
TF_BUILTIN_REGEXES: dict[str, list[str]] = {
    **_COMMON_REGEXES,
    CollectionKeys.WEIGHTS: ["^(?!gradients/)(.*/)?weights/((?!bias).)*$"],
    CollectionKeys.BIASES: ["^(?!gradients/).*/weights/.*bias", "^weights/.*bias"],
    CollectionKeys.GRADIENTS: ["^gradients/"],
    CollectionKeys.LOSSES: ["^loss$"],
    CollectionKeys.METRICS: [],
    CollectionKeys.SM_METRICS: [],
    CollectionKeys.OPTIMIZER_VARIABLES: [],
    CollectionKeys.INPUTS: [],
    CollectionKeys.OUTPUTS: [],
    CollectionKeys.LAYERS: [],
}
XGBOOST_BUILTIN_REGEXES: dict[str, list[str]] = {
    **_COMMON_REGEXES,
    CollectionKeys.HYPERPARAMETERS: ["^hyperparameters/.*$"],
    CollectionKeys.METRICS: ["^[a-zA-z]+-[a-zA-z0-9]+$"],
    # Evaluation metrics that are losses (lower is better), so LossNotDecreasing and
    # rule_configs.loss_not_decreasing()'s "losses" collection work for XGBoost too.
    CollectionKeys.LOSSES: [
        "^[^/]+-(rmse|rmsle|mae|mape|mphe|logloss|mlogloss|error|merror|[a-z]+-nloglik|gamma-deviance)(@[^/]*)?$"
    ],
    CollectionKeys.PREDICTIONS: ["^predictions$"],
    CollectionKeys.LABELS: ["^labels$"],
    CollectionKeys.FEATURE_IMPORTANCE: ["^feature_importance/.*"],
    CollectionKeys.AVERAGE_SHAP: ["^average_shap/.*[^/bias]$"],
    CollectionKeys.FULL_SHAP: ["^full_shap/.*[^/bias]$"],
    CollectionKeys.TREES: ["^trees/.*"],
}


class Collection:
    """A named group of tensors (smdebug's ``Collection``).

    Args:
        name: the collection name.
        include_regex: regexes; a tensor belongs when any matches (``re.search``).
        tensor_names: names that belong explicitly.
        reduction_config: overrides the hook's reductions for this collection.
        save_config: overrides the hook's schedule (modes left unset inherit it).
        save_histogram: export TensorBoard histograms of these tensors (when TB is on).

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        name: str,
        include_regex: Iterable[str] | None = None,
        tensor_names: Iterable[str] | None = None,
        reduction_config: ReductionConfig | None = None,
        save_config: SaveConfig | None = None,
        save_histogram: bool = True,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise HookConfigError(field_error_message("name", "a non-empty string", name), field="name", value=name)
        self.name = name
        self.include_regex: list[str] = []
        self._patterns: list[re.Pattern[str]] = []
        self._tensor_names: set[str] = set(tensor_names or ())
        self.reduction_config = reduction_config
        self.save_config = save_config
        self.save_histogram = save_histogram
        self._modules: dict[Any, tuple[bool, bool]] = {}
        self.include(list(include_regex or ()))

    @property
    def tensor_names(self) -> set[str]:
        """The explicit members; a list or set may be assigned (smdebug scripts assign lists)."""
        return self._tensor_names

    @tensor_names.setter
    def tensor_names(self, value: Iterable[str] | None) -> None:
        if value is not None and (isinstance(value, str) or not isinstance(value, (list, set, frozenset, tuple))):
            msg = field_error_message(f"{self.name}.tensor_names", "a list or set of names", value)
            raise HookConfigError(msg, field="tensor_names", value=value)
        self._tensor_names = set(value or ())

    @property
    def save_config(self) -> SaveConfig | None:
        """The collection's schedule (None: the hook's); a dict of modes is accepted, as smdebug."""
        return self._save_config

    @save_config.setter
    def save_config(self, value: SaveConfig | Mapping[ModeKeys, SaveConfigMode] | SaveConfigMode | None) -> None:
        self._save_config = None if value is None else SaveConfig.parse(value)

    def include(self, regex: str | Iterable[str]) -> None:
        """Add one regex or a list of regexes (duplicates are ignored)."""
        for item in include_items(regex):
            pattern = compile_include_regex(self.name, item, regex)
            if pattern.pattern not in self.include_regex:
                self._patterns.append(pattern)
                self.include_regex.append(pattern.pattern)

    def add_tensor_name(self, name: str) -> None:
        """Make ``name`` an explicit member."""
        self.tensor_names.add(name)

    def add_module_tensors(self, module: Any, inputs: bool = False, outputs: bool = True) -> None:
        """Add a (PyTorch) module's inputs and/or outputs; resolved to the module's tensor
        names when the hook that registered it prepares its collections (smdebug's API)."""
        self._modules[module] = (bool(inputs), bool(outputs))

    def add_block_tensors(self, block: Any, inputs: bool = False, outputs: bool = True) -> None:
        """Add an MXNet Gluon block's inputs and/or outputs by its name (smdebug.mxnet's API)."""
        if inputs:
            self.include(block.name + "_input_*")
        if outputs:
            self.include(block.name + "_output_*")

    @property
    def modules(self) -> dict[Any, tuple[bool, bool]]:
        """Module -> (inputs, outputs) added with :meth:`add_module_tensors`."""
        return self._modules

    def has_tensor_name(self, name: str) -> bool:
        """Whether ``name`` is an explicit member."""
        return name in self.tensor_names

    def matches(self, tensor_name: str) -> bool:
        """Whether ``tensor_name`` is a member (explicitly or by regex)."""
        return name_matches(tensor_name, self._tensor_names, self._patterns)

    def complete(self, default_save: SaveConfig, default_reductions: ReductionConfig) -> None:
        """Fill what the user left unset from the hook's defaults (scalar collections: raw only)."""
        if self.name in SCALAR_COLLECTIONS:
            self.save_histogram = False
            self.reduction_config = ReductionConfig(save_raw_tensor=True)
        elif self.reduction_config is None:
            self.reduction_config = default_reductions
        if self.save_config is None:
            self.save_config = default_save
        elif not self.save_config.is_complete():
            self.save_config = self.save_config.merged_with(default_save)

    def to_json_dict(self) -> dict[str, Any]:
        """The dict smdebug writes for one collection."""
        return {
            "name": self.name,
            "include_regex": list(self.include_regex),
            "tensor_names": sorted(self.tensor_names),
            "reduction_config": self.reduction_config.to_json_dict() if self.reduction_config else None,
            "save_config": self.save_config.to_json_dict() if self.save_config else None,
            "save_histogram": self.save_histogram,
        }

    @classmethod
    def from_dict(cls, params: Mapping[str, Any]) -> Collection:
        """Build from :meth:`to_json_dict` output (smdebug's ``Collection.from_dict``).

        Raises:
            HookConfigError: not a dict, or a bad value inside it.
        """
        if not isinstance(params, Mapping):
            raise HookConfigError(field_error_message("collection", "a dict", params), field="collection")
        rc, sc = params.get("reduction_config"), params.get("save_config")
        return cls(
            params.get("name", ""),
            include_regex=params.get("include_regex") or (),
            tensor_names=params.get("tensor_names") or (),
            reduction_config=ReductionConfig.from_dict(rc, where="reduction_config") if rc else None,
            save_config=SaveConfig.from_dict(sc) if sc else None,
            save_histogram=bool(params.get("save_histogram", True)),
        )

    @classmethod
    def from_json(cls, text: str) -> Collection:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def to_json(self) -> str:
        """:meth:`to_json_dict` as a JSON string."""
        return json.dumps(self.to_json_dict())

    def __eq__(self, other: object) -> bool:
        """Equal name, regexes, tensor names and configs (as smdebug); hashing stays by identity."""
        if not isinstance(other, Collection):
            return NotImplemented
        return self is other or (
            self.name == other.name
            and list(self.include_regex) == list(other.include_regex)
            and set(self.tensor_names) == set(other.tensor_names)
            and self.reduction_config == other.reduction_config
            and self.save_config == other.save_config
            and self.save_histogram == other.save_histogram
        )

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<Collection {self.name!r}>"


class CollectionManager:
    """All collections of one hook, with the framework's built-ins pre-created."""

    def __init__(self, builtins: dict[str, list[str]]) -> None:
        self.builtin_names = frozenset(builtins)
        self._collections: dict[str, Collection] = {}
        for name, regexes in builtins.items():
            self._collections[name] = Collection(name, include_regex=regexes)

    def get(self, name: str, create: bool = True) -> Collection:
        """The collection ``name``; created empty when missing and ``create``.

        Raises:
            KeyError: missing and not ``create``.
        """
        coll = self._collections.get(name)
        if coll is None:
            if not create:
                raise KeyError(name)
            coll = self._collections[name] = Collection(name)
        return coll

    def find(self, name: str) -> Collection | None:
        """The collection ``name``, or None (nothing is created)."""
        return self._collections.get(name)

    def add(self, collection: Collection) -> None:
        """Add or replace a collection."""
        if not isinstance(collection, Collection):
            raise HookConfigError(
                field_error_message("collection", "a Collection", collection), field="collection", value=collection
            )
        self._collections[collection.name] = collection

    def included_names(
        self,
        defaults: Iterable[str],
        include_collections: Iterable[str] | None,
        include_regex: str | Iterable[str] | None,
        save_all: bool,
    ) -> list[str]:
        """The names a hook saves: framework defaults, the user's, plus ``default`` when
        ``include_regex`` is given (its regexes go there) and ``all`` with ``save_all``."""
        names = list(defaults)
        names += [n for n in (include_collections or ()) if n not in names]
        if include_regex is not None:
            self.get(CollectionKeys.DEFAULT).include(include_regex)
            if CollectionKeys.DEFAULT not in names:
                names.append(CollectionKeys.DEFAULT)
        if save_all:
            self.get(CollectionKeys.ALL).include(".*")
            if CollectionKeys.ALL not in names:
                names.append(CollectionKeys.ALL)
        return names

    def check_configured(self) -> None:
        """Raise for a collection that is not built in and has nothing to match.

        Raises:
            InvalidCollectionConfiguration: naming the collection (smdebug's semantics).
        """
        for coll in self._collections.values():
            if coll.name not in self.builtin_names and not coll.include_regex and not coll.tensor_names:
                raise InvalidCollectionConfiguration(coll.name)

    def __contains__(self, name: object) -> bool:
        return name in self._collections

    def __iter__(self) -> Iterator[Collection]:
        return iter(list(self._collections.values()))

    def collections(self) -> dict[str, Collection]:
        """A copy of the name -> collection map."""
        return dict(self._collections)

    def saved(self, include_collections: list[str]) -> list[Collection]:
        """The collections a hook with ``include_collections`` saves (``all``: every one but the named-only ones)."""
        every = CollectionKeys.ALL in include_collections
        return [c for c in self if c.name in include_collections or (every and c.name not in NAMED_ONLY_COLLECTIONS)]

    def to_json_dict(self) -> dict[str, Any]:
        """``{name: collection dict}`` for every collection."""
        return {name: c.to_json_dict() for name, c in self._collections.items()}
