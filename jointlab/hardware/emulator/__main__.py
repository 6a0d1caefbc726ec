"""``python -m jointlab.hardware.emulator``: see :mod:`~jointlab.hardware.emulator.command_line`."""

import sys

from jointlab.hardware.emulator.command_line import main

sys.exit(main())
