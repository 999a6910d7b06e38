"""A note is shown by what Obsidian shows it as: its file name, or its `title` property when
set; never by its first heading ("Problem", "FAQs"). The heading stays a name search matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli._support import REFERENCE, invoke_json, memory_note

NOTES = {
    "Adjusting Monitor Brightness in Linux.md":
        "# Problem\n\nThe laptop panel is too bright at night; xrandr --brightness fixes it.\n",
    "Cryptography.md": "---\ntags: [crypto]\n---\n# FAQs\n\nWhy a nonce must never repeat.\n",
    "Blacklight OS.md": "# Homepage\n\nA small operating system for old laptops.\n",
    "Hosts/nas.md": "---\ntitle: The family NAS\n---\n# Table of Contents\n\nDisks and shares.\n",
}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    vault = tmp_path / "vault"
    for name, text in NOTES.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text(text, encoding="utf-8")
    note, _ = memory_note(vault, "2026-11-06 sam-prefers-restic", use_count=2,
                          last_used=REFERENCE, body="Sam prefers Restic over Borg for NAS backups.")
    text = note.read_text(encoding="utf-8")
    note.write_text(text.replace("# 2026-11-06 sam-prefers-restic", "# Sam prefers Restic"),
                    encoding="utf-8")
    return {"VAULTMEM_VAULT": str(vault), "VAULTMEM_DATA_DIR": str(tmp_path / "data"),
            "VAULTMEM_EMBEDDING_MODEL": "fake"}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("query", "path", "title"), [
    ("monitor brightness xrandr", "Adjusting Monitor Brightness in Linux.md",
     "Adjusting Monitor Brightness in Linux"),
    ("nonce repeat cryptography", "Cryptography.md", "Cryptography"),
    ("operating system old laptops", "Blacklight OS.md", "Blacklight OS"),
    ("disks and shares", "Hosts/nas.md", "The family NAS"),
])
def test_results_are_titled_by_file_name_or_title_property(
    env: dict[str, str], query: str, path: str, title: str
) -> None:
    results = invoke_json(["search", query, "--no-review"], env=env)["results"]
    shown = {r["path"]: r["title"] for r in results}
    assert shown[path] == title


@pytest.mark.timeout(120)
def test_the_first_heading_is_still_a_name_search_matches(env: dict[str, str]) -> None:
    results = invoke_json(["search", "Homepage", "--no-review"], env=env)["results"]
    assert results[0]["path"] == "Blacklight OS.md" and results[0]["title"] == "Blacklight OS"


@pytest.mark.timeout(120)
def test_a_memory_keeps_the_title_written_in_it(env: dict[str, str]) -> None:
    results = invoke_json(["search", "restic borg", "--memories-only"], env=env)["results"]
    assert results[0]["path"] == "memories/2026-11-06 sam-prefers-restic.md"
    assert results[0]["title"] == "Sam prefers Restic"


# vaultmem's own text --------------------------------------------------------------------------

MERGED = """---
stm_id: 6f1c2a9e-0000-4000-8000-000000000001
stm_created: 2026-11-01T10:00:00+00:00
stm_last_used: 2026-11-19T10:00:00+00:00
stm_use_count: 4
stm_strength: 1.5
stm_status: active
---
# The garage door opener resets after power cuts

The garage door opener resets after power cuts; re-pair the remote afterwards.

<!-- vaultmem:merged -->
> [!info] Merged by vaultmem on 2026-11-20
> These 2 memories said the same thing (similarity 0.93), so they live on as this one note.
<!-- /vaultmem:merged -->

<!-- vaultmem:related -->
## Related

- [[Quuxly Frobnicator Manual]]
<!-- /vaultmem:related -->
"""


@pytest.mark.timeout(120)
def test_vaultmems_own_banners_and_sections_are_not_searched_or_shown(
    env: dict[str, str]
) -> None:
    note = Path(env["VAULTMEM_VAULT"]) / "memories" / "2026-11-20 garage-door-opener.md"
    note.write_text(MERGED, encoding="utf-8")
    found = invoke_json(["search", "garage door opener remote"], env=env)["results"]
    hit = next(r for r in found if r["path"] == "memories/2026-11-20 garage-door-opener.md")
    for markup in ("vaultmem:", "[!info]", "Merged by vaultmem", "Related", "Quuxly"):
        assert markup not in hit["snippet"]
    for words in ("Quuxly Frobnicator Manual", "merged by vaultmem similarity"):
        matched = invoke_json(["search", words, "--matched-only"], env=env)["results"]
        assert all(r["path"] != hit["path"] for r in matched), words
