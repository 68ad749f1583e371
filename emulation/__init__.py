"""The emulated network: Mininet with P4 switches and hosts (`emulation.network.Emulation`, the Python
API), switch processes of the P4 target `p4sim.target` chooses, patched links, the emulated OCS
(`emulation.ocs`, the optical counterpart of p4sim) and `python -m emulation`."""
