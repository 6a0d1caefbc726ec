"""The parameters identification fits: names, robot-file fields, units and defaults."""

from __future__ import annotations

__all__ = [
    "DEFAULT_CUTOFF",
    "DEFAULT_PARAMETERS",
    "FIELDS",
    "PARAMETERS",
    "UNITS",
    "field_path",
]

#: Parameter name -> (section, key) of its robot-file field.
FIELDS: dict[str, tuple[str, str]] = {
    "static_friction": ("dynamics", "static_friction"),
    "damping": ("dynamics", "damping"),
    "armature": ("dynamics", "armature"),
    "delay": ("motor", "delay"),
    "torque_constant": ("motor", "torque_constant"),
    "effort": ("limits", "effort"),
}
#: Every parameter identification can fit, in report order.
PARAMETERS = tuple(FIELDS)
#: Units of each parameter for (rotary, linear) joints.
UNITS: dict[str, tuple[str, str]] = {
    "static_friction": ("N·m", "N"),
    "damping": ("N·m·s/rad", "N·s/m"),
    "armature": ("kg·m²", "kg"),
    "delay": ("steps", "steps"),
    "torque_constant": ("N·m/A", "N/A"),
    "effort": ("N·m", "N"),
}


def field_path(parameter: str) -> str:
    """``"dynamics.damping"`` for ``"damping"``."""
    section, key = FIELDS[parameter]
    return f"{section}.{key}"


#: What :func:`jointlab.identify.fit` identifies unless told otherwise. Saturation
#: (``"effort"``) is left out: a safe excitation never saturates the actuators, so it needs
#: a log that does.
DEFAULT_PARAMETERS = ("static_friction", "damping", "armature", "delay", "torque_constant")
#: Default low-pass cutoff of the regressions, Hz: far above excitation bands (a few Hz),
#: far below the noise of differentiated 1 kHz encoders.
DEFAULT_CUTOFF = 50.0
