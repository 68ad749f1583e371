"""p4sim compiler: P4_16 (v1model) to bmv2 JSON and P4Info."""
