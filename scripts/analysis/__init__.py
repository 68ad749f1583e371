"""Numbers and figures from a run's files: the thesis metrics, both ends of a stream, plots."""
