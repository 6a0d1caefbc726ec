"""Fixtures of the recording tests."""

from __future__ import annotations

import pytest
from recording_helpers import Run, make_run


@pytest.fixture
def run() -> Run:
    return make_run()
