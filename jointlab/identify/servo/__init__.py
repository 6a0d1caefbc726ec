"""Servo-level identification: what a position servo really does, from position-only recordings.

LeRobot datasets and JointLab logs of servo arms hold goal and present positions at the
recording's rate (30 fps for ``lerobot-record``). From them this package fits, per joint, the
achieved stiffness per P-register unit, Coulomb and viscous friction, backlash, the
command-to-motion delay and the torque limit (:mod:`.fit` on the model of :mod:`.model`),
referenced to the twin (:mod:`.identify`), writes them into the robot file, and compares
the twin with the recording (:mod:`.gap`). See docs/identification.md.
"""
