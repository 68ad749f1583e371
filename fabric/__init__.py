"""The fabric contract: what the P4 programs of p4src/ and the Python side agree on (names, modes,
ether types, sessions, flowlet defaults: `fabric.contract`) and what a switch's entities mean for
forwarding (`fabric.state`)."""
