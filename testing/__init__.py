"""Helpers for tests, benchmarks scripts and `hallubench demo`, never imported by the library itself
(tests/test_architecture.py keeps it so): tiny untrained models built from configs (`tiny_models`) and
the CrossCheck demo's model specs (`demo`)."""
