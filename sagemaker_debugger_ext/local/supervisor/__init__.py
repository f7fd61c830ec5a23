"""A job's detached supervisor process and what it starts: hosts, child processes, rule containers, sync.

Also the processing runner (the detached process of a local Processing job).
"""
