"""Entry point of the frozen app: the same `difflab` command as the installed package."""

import multiprocessing
import sys

from difflab.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
