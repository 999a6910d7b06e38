"""A note read as bytes (a large note in a sync, the status call's language sample) must give
the body and hashes its parsed form gives: the sync plans with the one and records the other,
so any difference would re-embed the note on every sync."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.errors import NoteError
from vaultmem.vault.notes import RawNote, parse_note

LINES = st.sampled_from([
    "---", "title: A note", "tags: [a, b]", "aliases:\n  - Other", "stm_use_count: 3", "",
    "# Heading", "Some text with #tag and [[Link]].", "```", "code # not a tag", "- item",
    "key: : broken", "\ufeff", "\x00", "é accents", "\r", "%% comment %%",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=14), st.binary(max_size=8), st.booleans())
def test_raw_bytes_give_the_parsed_notes_body_and_hashes(
    lines: list[str], tail: bytes, padded: bool
) -> None:
    raw = "\n".join(lines).encode("utf-8") + tail + (b"\x00" * 3 if padded else b"")
    note = RawNote("notes/n.md", raw, 1, False)
    try:
        parsed = parse_note("notes/n.md", raw, mtime_ns=1)
    except NoteError:
        try:
            note.fingerprint()
        except NoteError:
            return
        raise AssertionError("the bytes fingerprint where the note does not parse") from None
    assert note.body() == parsed.body
    assert note.fingerprint() == (parsed.body_hash, parsed.file_hash)
    assert note.parse() == parsed
