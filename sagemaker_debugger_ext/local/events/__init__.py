"""SageMaker's job state-change events: their definitions and patterns, the Python-callable handlers (run in
the process that created the job) and the host script that runs one file handler in its own process.
"""
