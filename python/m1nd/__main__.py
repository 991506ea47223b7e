"""``python -m m1nd`` = the ``m1nd`` command."""

import sys

from m1nd.cli import main

sys.exit(main())
