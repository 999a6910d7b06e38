"""Scanning the vault with ignore rules, symlinks and unreadable files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vaultmem.vault.ignore import IgnoreRules
from vaultmem.vault.scan import scan_vault
from vaultmem.vault.writes import TEMP_PREFIX


def _touch(root: Path, rel: str, data: bytes = b"# x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel in [
        "a.md",
        "Upper.MD",
        "notes/b.md",
        "notes/deep/c.md",
        "notes/image.png",
        ".obsidian/workspace.md",
        ".trash/old.md",
        ".git/x.md",
        ".hidden/h.md",
        ".dotfile.md",
        "node_modules/pkg/readme.md",
        "Templates/t.md",
        "Templates2/t2.md",
        "Daily/2024-01-01.md",
        "drafts/d.md",
        "drafts/keep.md",
        "attachments/x.excalidraw.md",
        "notes/b.md.swp",
        "notes/b.md~",
        "notes/.#b.md",
        "notes/x.tmp",
        f"notes/{TEMP_PREFIX}abc.tmp",
    ]:
        _touch(root, rel)
    (root / ".obsidian" / "app.json").write_text(
        json.dumps({"userIgnoreFilters": ["Templates/", "/^Daily\\//", "/excalidraw/"]})
    )
    (root / ".vaultmemignore").write_text("# comment\ndrafts/*\n!drafts/keep.md\n")
    return root


def test_ignore_rules_and_reasons(vault: Path) -> None:
    rules = IgnoreRules.from_vault(vault, extra_folders=["notes/deep/"])
    result = scan_vault(vault, rules)
    assert sorted(result.files) == [
        "Templates2/t2.md",
        "Upper.MD",
        "a.md",
        "drafts/keep.md",
        "notes/b.md",
    ]
    assert result.skipped == []
    assert rules.problems == ()
    assert rules.reason(".obsidian/workspace.md") == "obsidian config"
    assert rules.reason(".git", is_dir=True) == "dot-folder"
    assert rules.reason(".dotfile.md") == "dotfile"
    assert rules.reason("node_modules", is_dir=True) == "node_modules"
    assert rules.reason("Templates", is_dir=True) == "userIgnoreFilters: Templates/"
    assert rules.reason("Daily/x.md") == "userIgnoreFilters: /^Daily\\//"
    assert rules.reason("drafts/d.md") == ".vaultmemignore: drafts/*"
    assert rules.reason("notes/deep/c.md") == "configured folder: notes/deep"
    assert rules.reason("notes/b.md.swp") == "editor temp file"
    assert rules.reason(f"notes/{TEMP_PREFIX}abc.tmp") == "vaultmem temp file"
    assert rules.reason("notes/b.md") is None


def test_stats_are_recorded(vault: Path) -> None:
    result = scan_vault(vault, IgnoreRules.from_vault(vault))
    info = (vault / "a.md").stat()
    assert (result.files["a.md"].mtime_ns, result.files["a.md"].size) == (
        info.st_mtime_ns,
        info.st_size,
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "cannot read"),
        ('{"userIgnoreFilters": "Templates/"}', "not a list"),
        ('{"userIgnoreFilters": [42, "/[unclosed/", "ok/"]}', "bad regex"),
    ],
)
def test_malformed_app_json_is_reported_not_fatal(
    tmp_path: Path, content: str, problem: str
) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text(content)
    _touch(tmp_path, "n.md")
    rules = IgnoreRules.from_vault(tmp_path)
    assert any(problem in message for message in rules.problems)
    assert list(scan_vault(tmp_path, rules).files) == ["n.md"]


def test_symlinks_out_of_the_vault_and_loops(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _touch(root, "inside/n.md")
    _touch(tmp_path, "outside/secret.md")
    (root / "out-dir").symlink_to(tmp_path / "outside")
    (root / "out-file.md").symlink_to(tmp_path / "outside" / "secret.md")
    (root / "inside" / "loop").symlink_to(root)
    (root / "self-a.md").symlink_to("self-b.md")
    (root / "self-b.md").symlink_to("self-a.md")
    (root / "alias").symlink_to(root / "inside")
    result = scan_vault(root, IgnoreRules.from_vault(root))
    assert sorted(result.files) == ["inside/n.md"]
    assert sorted(result.skipped) == [
        ("alias", "symlink to a folder already scanned"),
        ("inside/loop", "symlink loop"),
        ("out-dir", "symlink pointing outside the vault"),
        ("out-file.md", "symlink pointing outside the vault"),
        ("self-a.md", "symlink loop"),
        ("self-b.md", "symlink loop"),
    ]


def test_too_large_and_not_regular(tmp_path: Path) -> None:
    _touch(tmp_path, "big.md", b"x" * 101)
    _touch(tmp_path, "small.md", b"x" * 100)
    os.mkfifo(tmp_path / "pipe.md")
    result = scan_vault(tmp_path, IgnoreRules.from_vault(tmp_path, max_note_bytes=100))
    assert list(result.files) == ["small.md"]
    assert sorted(result.skipped) == [("big.md", "too large"), ("pipe.md", "not a regular file")]


def test_unreadable_file_and_folder(tmp_path: Path) -> None:
    _touch(tmp_path, "locked.md")
    _touch(tmp_path, "closed/n.md")
    (tmp_path / "locked.md").chmod(0o000)
    (tmp_path / "closed").chmod(0o000)
    try:
        if os.access(tmp_path / "locked.md", os.R_OK):
            pytest.skip("running with privileges that read any file (root)")
        result = scan_vault(tmp_path, IgnoreRules.from_vault(tmp_path))
        assert result.files == {}
        assert sorted(result.skipped) == [("closed", "unreadable"), ("locked.md", "unreadable")]
    finally:
        (tmp_path / "locked.md").chmod(0o644)
        (tmp_path / "closed").chmod(0o755)


def test_unreadable_reported_even_when_privileged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same paths as above, with the permission failures injected (root reads anything)."""
    _touch(tmp_path, "locked.md")
    _touch(tmp_path, "open.md")
    _touch(tmp_path, "closed/n.md")
    real_scandir, real_access = os.scandir, os.access

    def scandir(path: str) -> object:
        if str(path).endswith("closed"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    def access(path: str, mode: int) -> bool:
        return not str(path).endswith("locked.md") and real_access(path, mode)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "access", access)
    result = scan_vault(tmp_path, IgnoreRules.from_vault(tmp_path))
    assert list(result.files) == ["open.md"]
    assert sorted(result.skipped) == [("closed", "unreadable"), ("locked.md", "unreadable")]
