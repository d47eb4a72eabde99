import sys

from difflab.cli import main

sys.exit(main())
