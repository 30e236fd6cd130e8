"""``python -m extrap_plugins`` and the ``extrap-plugins`` console script."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
