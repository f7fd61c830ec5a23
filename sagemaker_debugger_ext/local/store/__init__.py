"""What a local job is, shared by every process: the on-disk job store, the job spec and its checks before training.

The API writes a job here and the supervisor reads it back: the store is all the two sides share.
"""
