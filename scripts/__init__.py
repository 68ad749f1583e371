"""Experiments: runner, metrics pipeline (tshark, nstat, ss), plots and summaries."""
