"""Make a working copy of sample-vault/ whose memories are dated relative to today
(vaultmem/vault/demo.py), so the demo shows the same keep / forget / promote decisions on any
day.

Usage: python scripts/demo_vault.py SOURCE TARGET
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from vaultmem.vault.demo import redated_copy


def main(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    shifted, delta = redated_copy(source, target, datetime.now(UTC))
    print(f"demo vault at {target} ({shifted} memories re-dated by {delta.days} days)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
