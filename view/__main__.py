"""python -m view DIR: replay finished runs in the view's page (view/cli.py)."""

import sys

from view.cli import main

if __name__ == "__main__":
    sys.exit(main())
