"""``with`` support for writers: leaving the block calls ``close()``."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

__all__ = ["ClosesOnExit"]


class ClosesOnExit:
    """Mixin: ``with obj:`` returns ``obj`` and calls ``obj.close()`` on the way out."""

    def close(self) -> Any:  # pragma: no cover - every user defines it
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
