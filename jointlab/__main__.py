"""``python -m jointlab`` runs the ``jointlab`` command."""

import sys

from jointlab.cli import main

sys.exit(main())
