"""A chunk's text as a search result shows it: what Obsidian would show, not its Markdown source.

* A leading heading that repeats the note's title is dropped (a memory's body starts with
  `# <its title>`, and the title is shown beside the snippet already); other headings lose
  their `#` marks.
* `[[target|shown]]` shows `shown`; `[[target#heading]]` shows `target > heading`;
  `[[target]]` shows `target` (as Obsidian renders links); `[text](url)` shows `text`; an
  embed `![[file]]` shows `file`.
* A fenced block (```` ```statblock ````, ```` ```dataview ````, code) is not prose: it shows as
  `[statblock]` (its info word, `[code]` without one). When a chunk is nothing but blocks, the
  first block's lines are shown, joined by ` · `, without their fences.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"(?ms)^[ \t]{0,3}(?P<f>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n"
                    r"(?P<body>.*?)(?:^[ \t]{0,3}(?P=f)[ \t]*$|\Z)")
_HEADING = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+(?P<h>[^\n]*?)[ \t#]*$")
_WIKILINK = re.compile(r"!?\[\[(?P<target>[^\]|\n]{1,300}?)(?:\|(?P<shown>[^\]\n]{0,300}))?\]\]")
_MD_LINK = re.compile(
    r"!?\[(?P<text>[^\]\n]{0,300})\]\((?P<url>[^)\s]{1,2000})(?:[ \t]{1,4}\"[^\"\n]{0,300}\")?\)")
_PROSE_MIN = 20


def display_text(text: str, title: str = "") -> str:
    """`text` as a reader of the note sees it (see the module doc)."""
    blocks: list[str] = []

    def block(match: re.Match[str]) -> str:
        info = match.group("info").strip().split()
        blocks.append(match.group("body"))
        return f"\n[{info[0] if info else 'code'}]\n"

    # each pattern is tried only where its marker occurs: most chunks are plain prose, and a
    # search shows ten of them (the patterns scan every line otherwise)
    prose = _FENCE.sub(block, text) if "```" in text or "~~~" in text else text
    if "#" in prose:
        prose = _without_title(prose, title)
        prose = _HEADING.sub(lambda m: m.group("h"), prose)
    prose = _links(prose)
    if blocks and len(re.sub(r"\[[^\]\n]*\]|\s", "", prose)) < _PROSE_MIN:
        lines = [line.strip() for line in blocks[0].splitlines() if line.strip()]
        marker = prose.strip().split()[0] if prose.strip() else "[code]"
        return " ".join([marker, " · ".join(_links(line) for line in lines)]).strip()
    return prose.strip()


def _without_title(text: str, title: str) -> str:
    """Drop a first heading that says the title again."""
    match = _HEADING.search(text)
    if match is None or text[: match.start()].strip():
        return text
    if _plain(match.group("h")) == _plain(title) and title.strip():
        return text[: match.start()] + text[match.end():]
    return text


def _plain(text: str) -> str:
    return " ".join(_links(text).casefold().split())


def _links(text: str) -> str:
    def wikilink(match: re.Match[str]) -> str:
        shown = match.group("shown")
        if shown is not None and shown.strip():
            return shown.strip()
        target = match.group("target").strip()
        name, _, heading = target.partition("#")
        name = name.rsplit("/", 1)[-1]
        if name.endswith(".md"):
            name = name[:-3]
        heading = heading.lstrip("^#")
        return f"{name} > {heading}" if name and heading else (name or heading)

    if "[[" in text:
        text = _WIKILINK.sub(wikilink, text)
    if "](" not in text:
        return text
    return _MD_LINK.sub(lambda m: m.group("text") or m.group("url"), text)


ELLIPSIS = "…"
_TERM = re.compile(r"\w+")


def snippet(text: str, query: str, *, width: int = 200) -> str:
    """About `width` characters of `text` around the first query term, cut at word boundaries."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    budget = max(width - 2, 1)  # room for an ellipsis at each end
    position = _first_term_position(flat, query)
    start = max(0, min(position - budget // 3, len(flat) - budget))
    end = min(len(flat), start + budget)
    if start > 0 and not flat[start - 1].isspace():
        start = _next_word_start(flat, start, position)
    if end < len(flat) and not flat[end].isspace():
        end = _previous_word_end(flat, end, start)
    window = flat[start:end].strip()
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS if end < len(flat) else ""
    return f"{prefix}{window}{suffix}"


def _first_term_position(text: str, query: str) -> int:
    lowered = text.casefold()
    positions = [
        found for term in _TERM.findall(query.casefold()) if (found := lowered.find(term)) >= 0
    ]
    return min(positions, default=0)


def _next_word_start(text: str, start: int, limit: int) -> int:
    space = text.find(" ", start, max(limit, start))
    return space + 1 if space >= 0 else start


def _previous_word_end(text: str, end: int, start: int) -> int:
    space = text.rfind(" ", start + 1, end)
    return space if space > start else end
