"""Serial hardware backend: wire protocol, SSL ControlMessage, SerialRobot, device emulator."""
