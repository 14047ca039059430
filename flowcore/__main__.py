"""``python -m flowcore``: the ``flowcore`` command, for environments without the console script."""

import sys

from flowcore.cli import main

sys.exit(main())
