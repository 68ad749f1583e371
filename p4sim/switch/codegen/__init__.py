"""bmv2 JSON to Python source: `source` assembles the module from the generators (`base` names and
expressions, `parser`, `control` with `flow`, `fused`, `packet`) and loads it; `runtime` holds what
the generated code calls."""
