"""Bridges to other ecosystems.

LeRobot datasets, robot plugin and calibration files; MCAP (Foxglove) and Rerun export of logs.
"""
