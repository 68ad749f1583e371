"""The benchmarks (`python -m scripts.bench.NAME`, `hitless bench NAME`): each prints figures."""
