"""``smdebug.core.save_config``: :class:`SaveConfig` and :class:`SaveConfigMode` (the hook's)."""

from __future__ import annotations

from ..hooks._save_config import SaveConfig, SaveConfigMode

__all__ = [
           "DEFAULT_SAVE_CONFIG_END_STEP",
           "DEFAULT_SAVE_CONFIG_INTERVAL",
           "DEFAULT_SAVE_CONFIG_SAVE_STEPS",
           "DEFAULT_SAVE_CONFIG_START_STEP",
           "SaveConfig",
           "SaveConfigMode",
]  # fmt: skip

DEFAULT_SAVE_CONFIG_INTERVAL = 500
DEFAULT_SAVE_CONFIG_START_STEP = 0
DEFAULT_SAVE_CONFIG_END_STEP = None
DEFAULT_SAVE_CONFIG_SAVE_STEPS: list[int] = []
