"""Bridges to other ecosystems: LeRobot datasets, robot plugin and calibration files."""
