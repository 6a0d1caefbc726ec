"""A small floating-base robot for the tests: no built-in robot has a floating base."""

from __future__ import annotations

from jointlab.robots import RobotDescription, description_from_dict

#: Mass of the puck's base, kg.
BASE_MASS = 2.0
#: Mass the puck's one joint slides, kg.
SLIDER_MASS = 1.0


def puck() -> RobotDescription:
    """A 3 kg puck resting on the ground with one linear joint inside it.

    The base is floating: a cylinder 0.2 m wide and 0.1 m tall (the URDF base is as tall as
    its radius) standing on the ground plane with its centre at z = 0.05 m. The joint
    ``slider`` moves a 1 kg sphere (radius 0.02 m, inside the cylinder) ±0.05 m along the
    base's x axis; the base moves in reaction, so the joint drives the reduced mass
    ``BASE_MASS·SLIDER_MASS / (BASE_MASS + SLIDER_MASS)``.
    """
    return description_from_dict(
        {
            "name": "puck",
            "base": {
                "position": [0.0, 0.0, 0.05],
                "fixed": False,
                "mass": BASE_MASS,
                "radius": 0.1,
            },
            "actuators": [
                {
                    "name": "slider",
                    "type": "linear",
                    "axis": [1, 0, 0],
                    "length": 0.0,
                    "min": -0.05,
                    "max": 0.05,
                    "limits": {"velocity": 1.0, "effort": 40.0},
                    "dynamics": {"damping": 1.0, "armature": 0.0},
                    "link": {"mass": SLIDER_MASS, "radius": 0.02},
                }
            ],
        }
    )
