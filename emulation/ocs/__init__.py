"""The emulated OCS: a Polatis-like switch speaking SCPI (server), its delay model, the schedule mode,
and the data plane it drives (the `ocs` P4 switch's `circuit` table and its links)."""
