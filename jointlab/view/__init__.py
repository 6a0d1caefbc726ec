"""The live view: a browser 3D view and live plots of any robot (``jointlab view``).

:class:`LiveView` serves the page (viser); :class:`ViewFeed` is what the control loop
fills; :class:`RealTimePacer` keeps a watched simulated robot at real time;
:mod:`jointlab.view.browser` drives headless Chromium for screenshots and tests.
Needs the ``view`` extra.
"""

from jointlab.view.feed import FeedEvent, FeedWindow, ViewFeed
from jointlab.view.pacing import RealTimePacer
from jointlab.view.server import DEFAULT_PORT, LiveView

__all__ = ["DEFAULT_PORT", "FeedEvent", "FeedWindow", "LiveView", "RealTimePacer", "ViewFeed"]
