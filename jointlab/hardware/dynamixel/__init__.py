"""ROBOTIS Dynamixel (Protocol 2.0): control tables, the SDK driver, the emulated servos."""
