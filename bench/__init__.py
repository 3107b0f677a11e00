"""Benchmarks, run as modules from the checkout's root: `.venv/bin/python -m bench.NAME`.

They share the tests' helpers through the `tests.support` package.
"""
