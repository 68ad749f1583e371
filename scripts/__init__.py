"""Experiments, their analysis and reports, benchmarks and tools, in rooms that import downward:
hosts < analysis < experiments < report < the glue here (experiment.py, demo.py, __main__.py); tools
and bench after them (tests/test_layers.py)."""
