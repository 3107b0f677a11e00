"""The worker: the queue loop, its jobs and the statements it sends."""
