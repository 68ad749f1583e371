"""What runs in and at the emulated hosts: captures (tcpdump), kernel TCP counters (nstat, ss), host
processes, and the traffic programs run inside hosts (sized TCP flows, sequence-numbered UDP)."""
