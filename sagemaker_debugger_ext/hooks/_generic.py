"""A hook for any Python training loop: explicit steps, numpy (or ``.numpy()``) values."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from ._hook import BaseHook

__all__ = ["Hook"]


class Hook(BaseHook):
    """A hook for any Python training loop: advance steps yourself, save what you like.

    Example::

        hook = Hook(out_dir="/tmp/run", save_config=SaveConfig(save_interval=10),
                    include_collections=["weights", "losses"])
        for step in range(100):
            hook.advance_step()
            loss = train_one_step()
            hook.record_tensor_value("my_loss", loss)       # collection "losses" by name
            hook.save_tensor("w", weights, "weights")       # explicit collection
            hook.save_scalar("lr", lr)
        hook.close()

    .. versionadded:: 0.1.0
    """

    default_include_collections: ClassVar[tuple[str, ...]] = ()

    def advance_step(self) -> None:
        """Start the next step (in the current mode)."""
        if self._disabled or self._closed:
            return
        with self._guard():
            self._start_step()

    def record_tensor_value(self, tensor_name: str, tensor_value: Any) -> None:
        """Save ``tensor_value`` when an included collection matching ``tensor_name`` is due."""
        if self._disabled or not self._due:
            return
        with self._guard():
            self._save_for_tensor(tensor_name, tensor_value)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
