"""The caller's process only: SDK v2's ``LocalSession``, its SDK patches, following a job's logs and progress."""
