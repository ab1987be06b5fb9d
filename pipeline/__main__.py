"""`python -m pipeline` runs the `compaction` command."""

import sys

from pipeline.cli.main import main

# Worker processes re-import the main module; only a real run may start the command.
if __name__ == "__main__":
    sys.exit(main())
