"""The experiments: their specs (the YAML files here), one module per kind, the runner, and the
standalone seed experiments (seed001, schedule_alltoall, schedule_timing)."""
