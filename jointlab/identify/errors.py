"""The error of the identification package."""

from __future__ import annotations

from jointlab.errors import JointLabError

__all__ = ["IdentificationError"]


class IdentificationError(JointLabError, ValueError):
    """A log cannot identify what was asked of it.

    Raised for a log without the needed columns, one too short, or one that does not excite a
    parameter (a rank-deficient regressor). The message names the parameter and the joint that
    cannot be identified and the excitation that would identify them.
    """
