"""topo package."""
