"""Regenerate the table of the reproductions docs page from the declarations:
`python -m hallubench.reproduce docs/topics/reproductions.md`."""
import sys
from pathlib import Path

from hallubench.reproduce.report import page_with_table

page = Path(sys.argv[1])
page.write_text(page_with_table(page.read_text(encoding="utf-8")), encoding="utf-8")
