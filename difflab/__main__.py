import sys

from difflab.app.cli import main

sys.exit(main())
