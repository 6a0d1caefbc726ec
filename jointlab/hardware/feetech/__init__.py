"""Feetech STS/SCS: control table, the SDK driver, the emulated servos."""
