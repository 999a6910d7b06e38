"""The intake gate on its judged set (tests/data/intake/plain_secrets_judged.tsv).

Each sentence is judged by hand: "secret" (a credential given a value) or "ordinary". The set is
split for good by each sentence's SHA-256: a third (the hash's first 8 hex digits mod 3 == 0) is
the held-out part, kept apart while the rule is written; the rest is the dev part. Prints, for each
part, the share of secrets refused and of ordinary sentences accepted.

    .venv/bin/python -m bench.intake_gate            both parts
    .venv/bin/python -m bench.intake_gate --errors dev   also list the dev part's misjudged lines

Only the dev part's errors are meant for writing the rule; listing the held-out part's errors
(`--errors held-out`) is for the report once the rule is final.
"""

from __future__ import annotations

import argparse
import hashlib
from dataclasses import dataclass
from pathlib import Path

from vaultmem.core.intake import find_secret

JUDGED = Path(__file__).resolve().parent.parent / "tests" / "data" / "intake" / (
    "plain_secrets_judged.tsv")
DEV, HELD_OUT = "dev", "held-out"


@dataclass(frozen=True)
class Judged:
    secret: bool
    text: str

    @property
    def part(self) -> str:
        return part_of(self.text)


def part_of(text: str) -> str:
    """The sentence's part, fixed by its SHA-256: a third is held out."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return HELD_OUT if int(digest[:8], 16) % 3 == 0 else DEV


def load(path: Path = JUDGED) -> list[Judged]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, text = line.split("\t", 1)
        if label not in ("secret", "ordinary"):
            raise ValueError(f"unknown label {label!r} in {path}")
        rows.append(Judged(label == "secret", text))
    return rows


@dataclass(frozen=True)
class Score:
    secrets: int
    refused: int
    ordinary: int
    accepted: int

    def line(self, part: str) -> str:
        return (f"{part:<9} secrets refused {self.refused}/{self.secrets} "
                f"({100 * self.refused / max(self.secrets, 1):.1f} %)   "
                f"ordinary accepted {self.accepted}/{self.ordinary} "
                f"({100 * self.accepted / max(self.ordinary, 1):.1f} %)")


def score(rows: list[Judged]) -> tuple[Score, list[Judged]]:
    errors = [row for row in rows if (find_secret(row.text) is not None) != row.secret]
    secrets = [row for row in rows if row.secret]
    ordinary = [row for row in rows if not row.secret]
    missed = sum(1 for row in errors if row.secret)
    flagged = sum(1 for row in errors if not row.secret)
    return Score(len(secrets), len(secrets) - missed, len(ordinary),
                 len(ordinary) - flagged), errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", choices=(DEV, HELD_OUT), help="list this part's errors")
    args = parser.parse_args(argv)
    rows = load()
    for part in (DEV, HELD_OUT):
        result, errors = score([row for row in rows if row.part == part])
        print(result.line(part))
        if args.errors == part:
            for row in errors:
                print(f"  {'missed' if row.secret else 'refused'}: {row.text}")
    overall, _ = score(rows)
    print(overall.line("all"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
