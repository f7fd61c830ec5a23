"""The SageMaker API over the job store: Create/Describe/List/Stop/Update of training and processing jobs.

Runs in whichever process calls it: the caller's (SDK, CLI), ``serve``'s HTTP server, and a job's supervisor
(the API its event handlers call). It starts a job's detached processes by module name, never by import.
"""
