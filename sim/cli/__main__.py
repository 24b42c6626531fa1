"""``python -m sim.cli``: the ``schedsearch`` command."""

import sys

from sim.cli import main

sys.exit(main())
