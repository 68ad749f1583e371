"""The optical side: OCS driver interface, SCPI emulator with the thesis delay model, schedule mode, Polatis driver."""
