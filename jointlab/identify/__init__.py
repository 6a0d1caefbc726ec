"""Actuator identification: excite a robot, fit its actuators from the log, validate, write back.

The loop that closes the sim-to-real gap of a robot's actuators::

    from jointlab.identify import excitation, fit, record_excitation, validate

    program = excitation("arm6")                                   # 1. safe excitation
    with jointlab.connect("serial:///dev/ttyUSB0?robot=arm6") as robot:
        record_excitation(robot, program, "excite.npz")            #    run it, record it
    result = fit("excite.npz", "arm6")                             # 2. identify
    result.save("arm6_identified.yaml")                            #    write the robot file
    report = validate("held_out.npz", "arm6", result.to_description())   # 3. validate

See docs/identification.md for the models, the assumptions and the command line
(``jointlab identify excite`` and ``jointlab identify fit``).
"""

from jointlab.identify.errors import IdentificationError
from jointlab.identify.excitation import SIGNALS, Excitation, ExcitationSegment, excitation
from jointlab.identify.fit import DEFAULT_PARAMETERS, fit
from jointlab.identify.planted import NominalView, connect_planted, physics_dt, plant
from jointlab.identify.record import record_excitation
from jointlab.identify.result import Estimate, IdentificationResult, Residuals
from jointlab.identify.validation import ValidationReport, validate
from jointlab.identify.writeback import PARAMETERS

__all__ = [
    "DEFAULT_PARAMETERS",
    "PARAMETERS",
    "SIGNALS",
    "Estimate",
    "Excitation",
    "ExcitationSegment",
    "IdentificationError",
    "IdentificationResult",
    "NominalView",
    "Residuals",
    "ValidationReport",
    "connect_planted",
    "excitation",
    "fit",
    "physics_dt",
    "plant",
    "record_excitation",
    "validate",
]
