"""What a controller needs of an OCS: the driver interface, SCPI text, and the Polatis driver (which
also drives the emulator of `emulation.ocs`)."""
