"""p4sim switch: runs bmv2 JSON on Linux interfaces behind a P4Runtime server."""
