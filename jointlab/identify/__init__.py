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
(``jointlab identify excite`` and ``jointlab identify fit``). Names are imported on first
use, so ``import jointlab.identify`` (and the ``jointlab`` command) stays quick.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> module that defines it.
_EXPORTS = {
    "IdentificationError": "errors",
    "SIGNALS": "excite",
    "Excitation": "excite",
    "ExcitationSegment": "excite",
    "excitation": "excite",
    "DEFAULT_CUTOFF": "parameters",
    "DEFAULT_PARAMETERS": "parameters",
    "fit": "estimate",
    "NominalView": "planted",
    "connect_planted": "planted",
    "physics_dt": "planted",
    "plant": "planted",
    "record_excitation": "record",
    "Estimate": "result",
    "IdentificationResult": "result",
    "Residuals": "result",
    "ValidationReport": "validation",
    "validate": "validation",
    "PARAMETERS": "parameters",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
