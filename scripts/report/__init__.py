"""Summaries of an experiment's runs: statistics per variant, the verdicts, tables and figures."""
