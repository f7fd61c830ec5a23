"""smdebug's ``smdebug.core`` module paths, for scripts that import from them.

Each submodule re-exports this package's own classes under smdebug's module names
(``core.modes``, ``core.collection``, ``core.save_config``, ``core.reduction_config``,
``core.tensor``, ``core.writer``, ``core.reader``, ``core.json_config``,
``core.config_constants``); there is no second implementation behind them.
"""
