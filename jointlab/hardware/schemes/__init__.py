"""The hardware schemes of :func:`jointlab.connect` that choose between backends.

``emulated://`` (:mod:`.emulated`) picks JointLab's device emulator, the reference firmware
or the robot's emulated servo bus; it sits above ``hardware/host`` and
``hardware/servo_host`` so that each of them stays unaware of the other.
"""
