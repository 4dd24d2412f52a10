"""Developer tools, outside the installed package: the benchmark harness (``python -m tools.bench``, ``make bench``)."""
