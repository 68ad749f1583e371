"""p4sim package."""
