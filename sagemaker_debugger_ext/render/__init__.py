"""Drawing for people: HTML pages (``_html``) and figures (``_figure``, matplotlib imported on first use).

No knowledge of trials, rules or jobs: the rule processes (a rule's report, the profiler report) and
``reports`` (the job report, plots) render with it.
"""
