"""Data-parallel and sharded PyTorch training: worker names, unsharded names, gathered values.

DDP needs nothing special: every rank holds whole parameters, the hook names the worker
``worker_<rank>`` from the process group and saves what smdebug 1.0.34 saves (a registered
``DistributedDataParallel`` wrapper names its parameters ``DistributedDataParallel_module.<path>``,
as smdebug does; register the inner model to get ``<Model>_<path>``). Gradients are the
rank's local gradients, taken before DDP's all-reduce, as in smdebug.

FSDP2 (``torch.distributed.fsdp.fully_shard``) shards every parameter into a ``DTensor``.
For those parameters (:class:`ShardedParams`):

* names are the unsharded model's: the ``FSDP<Model>`` class fully_shard creates is named
  ``<Model>``, and FSDP1 / activation-checkpoint wrapper prefixes (``_fsdp_wrapped_module.``,
  ``_checkpoint_wrapped_module.``) are dropped (:mod:`._naming`);
* at a saved step every rank gathers each due parameter with ``DTensor.full_tensor()`` (an
  all-gather, so every rank takes part, writers or not, in the same order) and the writing
  ranks save the full tensor: one logical tensor per name, equal on every worker. When every
  due collection saves reductions only, nothing is gathered: the shards' partial statistics
  are combined by ``all_reduce`` (:mod:`._shard_reductions`);
* gradients are the rank's local, unsharded gradients (before FSDP's reduce-scatter, as
  DDP's before its all-reduce), taken from the unsharded parameters FSDP puts on each module
  during its forward: no communication.

FSDP1 (``FullyShardedDataParallel``): the registered wrapper's parameters are gathered all
at once with ``summon_full_params`` at saved steps; its gradients are not saved.

Memory: one gathered parameter at a time on every rank (freed once the writer has copied
it), plus what the writer holds for the step (the saved tensors, as without sharding);
FSDP1: the whole model while it is gathered. docs/hook.md has the table.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import torch

from ...modes import ModeKeys
from .._collections import GRADIENT_PREFIX
from .._reduction_config import reduction_tensor_name
from ._naming import parameter_names
from ._shard_reductions import SUPPORTED, reduce_shards

if TYPE_CHECKING:
    from .._collections import Collection
    from ._hook import Hook

__all__ = ["ShardedParams", "adopt_process_group", "on_first_step"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")


def is_sharded(param: torch.Tensor) -> bool:
    """Whether ``param`` is a DTensor (a shard of a larger logical tensor)."""
    dtensor = sys.modules.get("torch.distributed.tensor")
    cls = getattr(dtensor, "DTensor", None) if dtensor is not None else None
    return cls is not None and isinstance(param, cls)


def on_first_step(hook: Hook) -> None:
    """Checks at the hook's first step, before anything is written: the process group's rank
    (:func:`adopt_process_group`) and parameters replaced since registration."""
    adopt_process_group(hook)
    live = {id(p) for module in hook._modules for p in module.parameters(recurse=False)}
    stale = [name for name, p in hook._params if id(p) not in live]
    if stale:
        _LOG.warning(
            "parameters %s were replaced after register_module() (by fully_shard, an FSDP1 wrapper or "
            "an assignment): the hook would save their old values; register the model after wrapping or "
            "sharding it",
            ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else ""),
        )


def adopt_process_group(hook: Hook) -> None:
    """Take the rank and world size of a process group initialised after the hook was made.

    smdebug reads the rank once, when the hook is built; a script that builds the hook first
    and calls ``init_process_group(rank=..., world_size=...)`` after (no ``$RANK``) would have
    every rank write ``worker_0``.
    """
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        return
    rank, world = int(dist.get_rank()), int(dist.get_world_size())
    ctx = hook.context
    if (ctx.rank, ctx.world_size) == (rank, world):
        return
    hook.context = attrs.evolve(ctx, rank=rank, world_size=world)
    hook.worker = hook.context.worker
    hook._writes = not hook.dry_run and (hook.save_all_workers or rank == 0)
    if not hook._writes:
        hook._tb = None


@attrs.define
class ShardedParams:
    """The sharded parameters of the registered modules, saved by gathering (see the module doc)."""

    params: list[tuple[str, torch.nn.Parameter]] = attrs.field(factory=list)
    # module -> its own (attribute, tensor name) for sharded parameters, for the gradient hooks
    owners: dict[torch.nn.Module, list[tuple[str, str]]] = attrs.field(factory=dict)
    # registered FSDP1 wrappers -> the (cleaned) names of their parameters, known after the first gather
    fsdp1: dict[torch.nn.Module, tuple[str, ...] | None] = attrs.field(factory=dict)

    def add(
        self, model: torch.nn.Module, named: list[tuple[str, torch.nn.Parameter]]
    ) -> list[tuple[str, torch.nn.Parameter]]:
        """Keep ``named``'s sharded parameters; return the others (saved as usual)."""
        if _is_fsdp1(model):
            self.fsdp1[model] = None
            return []
        sharded = {id(p): name for name, p in named if is_sharded(p)}
        if not sharded:
            return named
        for module in model.modules():
            own = [
                (attr, sharded[id(p)]) for attr, p in module._parameters.items() if p is not None and id(p) in sharded
            ]
            if own:
                self.owners.setdefault(module, []).extend(own)
        self.params.extend((name, p) for name, p in named if id(p) in sharded)
        return [(name, p) for name, p in named if id(p) not in sharded]

    def __bool__(self) -> bool:
        return bool(self.params or self.fsdp1)

    def save_gathered(self, hook: Hook, due: frozenset[Collection]) -> None:
        """Save each due parameter (on writing ranks); every rank must call this, since it
        gathers: the full tensor when a due collection saves raw tensors, else only the
        shards' reductions (:mod:`._shard_reductions`)."""
        by_shards = []
        for name, param in self.params:
            colls = tuple(c for c in hook._collections_of(name) if c in due)
            if not colls:
                continue
            if _reductions_only(colls) and _sharded_1d(param):
                by_shards.append((name, param, colls))
                continue
            full = param.detach().full_tensor()  # type: ignore[attr-defined]
            if hook._writes:
                hook._write_for(name, full, colls)
            del full
        if by_shards:
            _save_shard_reductions(hook, by_shards)
        for root, names in self.fsdp1.items():
            if names is None or any(c in due for name in names for c in hook._collections_of(name)):
                self.fsdp1[root] = _save_fsdp1(hook, root, due)

    def on_step(self, hook: Hook) -> None:
        """At the start of a step (every rank): gather the due parameters, hook the due gradients."""
        clock = hook._clock
        due = hook._schedule.at(clock.mode, clock.mode_steps[clock.mode])  # what the writers save, on every rank
        if due:
            self.save_gathered(hook, due)
        if hook._due and hook.mode not in (ModeKeys.EVAL, ModeKeys.PREDICT) and not hook._own_backward:
            own_due = hook._due
            self.attach_gradients(
                hook, lambda g: any(c in own_due and c.matches(g) for c in hook._to_save), hook._handles
            )

    def attach_gradients(self, hook: Hook, wanted: Callable[[str], bool], handles: list[Any]) -> None:
        """Save the local unsharded gradients of the parameters ``wanted`` (a gradient name test)
        this step. A module whose parameters FSDP has already unsharded (the root, in its forward
        pre-hook) is hooked now; the others through a forward pre-hook, which runs after FSDP's.
        ``handles`` collects what to remove at the step's end."""
        for module, own in self.owners.items():
            picked = [(attr, GRADIENT_PREFIX + name) for attr, name in own if wanted(GRADIENT_PREFIX + name)]
            if not picked:
                continue
            hooker = _grad_hooker(hook, picked, handles)
            current = [module._parameters.get(attr) for attr, _ in picked]
            if all(p is None or not is_sharded(p) for p in current):
                hooker(module, ())
            else:
                handles.append(module.register_forward_pre_hook(hooker))


def _grad_hooker(hook: Hook, picked: list[tuple[str, str]], handles: list[Any]) -> Any:
    done: set[int] = set()  # a module called twice in a step is hooked once

    def pre(module: torch.nn.Module, args: Any) -> None:
        for attr, gname in picked:
            param = module._parameters.get(attr)
            if param is not None and param.requires_grad and not is_sharded(param) and id(param) not in done:
                done.add(id(param))
                handles.append(param.register_hook(hook._grad_callback(gname)))

    return pre


def _is_fsdp1(module: torch.nn.Module) -> bool:
    if "torch.distributed.fsdp" not in sys.modules:
        return False
    from torch.distributed.fsdp import FullyShardedDataParallel

    return isinstance(module, FullyShardedDataParallel)


def _save_fsdp1(hook: Hook, root: torch.nn.Module, due: frozenset[Collection]) -> tuple[str, ...]:
    """Gather the whole FSDP1 model (``summon_full_params``, every rank) and save its due
    parameters; return the parameter names."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    with FullyShardedDataParallel.summon_full_params(root, writeback=False):
        named = parameter_names(root)
        for name, param in named:
            colls = tuple(c for c in hook._collections_of(name) if c in due)
            if colls and hook._writes:
                # a copy: a numpy view would pin the gathered storage, which FSDP frees on exit
                hook._write_for(name, param.detach().clone(), colls)
    return tuple(name for name, _ in named)


def _reductions_only(colls: tuple[Collection, ...]) -> bool:
    """Whether the collections save only reductions (no raw tensor) that shards can give."""
    for coll in colls:
        cfg = coll.reduction_config
        if cfg is None or cfg.save_raw_tensor or not cfg.all_reductions:
            return False
        if any(op not in SUPPORTED for op, _ in cfg.all_reductions):
            return False
    return True


def _sharded_1d(param: torch.Tensor) -> bool:
    """A DTensor sharded over a one-dimensional mesh (FSDP2; HSDP's replicas would count twice)."""
    placements: Any = getattr(param, "placements", ())
    return len(placements) == 1 and placements[0].is_shard()


def _save_shard_reductions(hook: Hook, items: list[tuple[str, torch.nn.Parameter, tuple[Collection, ...]]]) -> None:
    by_group: dict[Any, list[tuple[str, torch.nn.Parameter, tuple[Collection, ...]]]] = {}
    for item in items:  # one set of all_reduces per process group, in the same order on every rank
        by_group.setdefault(item[1].device_mesh.get_group(), []).append(item)  # type: ignore[attr-defined]
    for group, group_items in by_group.items():
        wanted = [tuple(dict.fromkeys(pair for c in colls for pair in c.reduction_config.all_reductions))  # type: ignore[union-attr]
                  for _, _, colls in group_items]  # fmt: skip
        results = reduce_shards([p.to_local() for _, p, _ in group_items], wanted, group)  # type: ignore[attr-defined]
        if hook._writes:
            _write_reductions(hook, group_items, results)


def _write_reductions(hook: Hook, items: list[tuple[str, torch.nn.Parameter, tuple[Collection, ...]]],
                      results: list[dict[tuple[str, bool], Any]]) -> None:  # fmt: skip
    out = hook._output_for_step()
    for (name, param, colls), values in zip(items, results, strict=True):
        for (op, is_abs), value in values.items():
            out.write_raw(reduction_tensor_name(name, op, is_abs), value)
        if any(c.reduction_config.save_shape for c in colls):  # type: ignore[union-attr]
            out._shapes.append((name, tuple(param.shape)))
