"""`python -m hallubench` and `accelerate launch -m hallubench` enter the CLI here."""
import sys

from hallubench.cli.main import main

sys.exit(main())
