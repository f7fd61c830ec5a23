"""What every rule process shares, Debugger rules (``rules``) and profiler rules (``profiler.rules``) alike.

Parameters in (``_params``: one parser, the service's messages), a result out (``_result``:
``RuleResult``), a status file (``_status``: ``EvaluationStatus``, ``write_status``). Profiler rules sit
below ``rules`` in the layers, so what both use lives here, below both.
"""
