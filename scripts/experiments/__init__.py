"""The experiments: their specs (the YAML files here), one module per kind (seed001: reservation,
schedule_alltoall: alltoall), the runner, and the standalone schedule_timing."""
