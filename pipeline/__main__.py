"""`python -m pipeline` runs the `compaction` command."""

import sys

from pipeline.cli import main

sys.exit(main())
