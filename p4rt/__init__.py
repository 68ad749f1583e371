"""A program-agnostic P4Runtime layer: values, the P4Info schema, entities, the client, a device's
desired state (`p4rt.state`) and the reconcile planner that turns a held state into a wanted one."""
