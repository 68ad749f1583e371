"""The emulated network: Mininet with P4 switches and hosts (`emulation.network.Emulation`, the Python
API), the P4 target's command lines (`emulation.target`), switch processes, patched links, the
emulated OCS (`emulation.ocs`, the optical counterpart of p4sim) and `python -m emulation`."""
