"""Vault path resolution: nothing outside the vault is ever reachable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmem.errors import InvalidInput, NoteError, NotFound, PathOutsideVault
from vaultmem.vault.notes import read_listed_note, read_raw_note
from vaultmem.vault.paths import resolve_folder, resolve_in_vault, to_relative


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "note.md").write_text("x")
    (root / "top.md").write_text("x")
    (tmp_path / "secret.md").write_text("outside")
    return root


class TestResolve:
    @pytest.mark.parametrize("user_path", ["sub/note.md", "sub/note", "./sub/../sub/note"])
    def test_relative_forms(self, vault: Path, user_path: str) -> None:
        assert resolve_in_vault(vault, user_path) == ("sub/note.md", vault / "sub" / "note.md")

    def test_absolute_inside(self, vault: Path) -> None:
        rel, absolute = resolve_in_vault(vault, str(vault / "top.md"))
        assert (rel, absolute) == ("top.md", vault / "top.md")

    @pytest.mark.parametrize("user_path", ["../secret.md", "../secret", "sub/../../secret.md"])
    def test_dotdot_escapes(self, vault: Path, user_path: str) -> None:
        with pytest.raises(PathOutsideVault):
            resolve_in_vault(vault, user_path)

    def test_absolute_outside(self, vault: Path) -> None:
        with pytest.raises(PathOutsideVault):
            resolve_in_vault(vault, str(vault.parent / "secret.md"))

    def test_symlinked_file_pointing_out(self, vault: Path) -> None:
        (vault / "link.md").symlink_to(vault.parent / "secret.md")
        with pytest.raises(PathOutsideVault):
            resolve_in_vault(vault, "link.md")

    def test_symlinked_parent_folder_pointing_out(self, vault: Path) -> None:
        (vault / "outdir").symlink_to(vault.parent)
        with pytest.raises(PathOutsideVault):
            resolve_in_vault(vault, "outdir/secret.md")
        with pytest.raises(PathOutsideVault):
            resolve_in_vault(vault, "outdir/new.md", must_exist=False)

    def test_symlink_inside_the_vault_is_fine(self, vault: Path) -> None:
        (vault / "alias.md").symlink_to(vault / "top.md")
        assert resolve_in_vault(vault, "alias")[0] == "alias.md"

    def test_vault_reached_through_a_symlink(self, vault: Path, tmp_path: Path) -> None:
        (tmp_path / "vault-link").symlink_to(vault)
        assert resolve_in_vault(tmp_path / "vault-link", "top")[0] == "top.md"
        assert resolve_in_vault(vault, str(tmp_path / "vault-link" / "top.md"))[0] == "top.md"

    def test_missing(self, vault: Path) -> None:
        with pytest.raises(NotFound):
            resolve_in_vault(vault, "nope")
        assert resolve_in_vault(vault, "new/nope.md", must_exist=False)[0] == "new/nope.md"

    @pytest.mark.parametrize("user_path", ["", ".", "a\x00b"])
    def test_invalid(self, vault: Path, user_path: str) -> None:
        with pytest.raises(InvalidInput):
            resolve_in_vault(vault, user_path)


class TestHelpers:
    def test_to_relative(self, vault: Path) -> None:
        assert to_relative(vault, vault / "sub" / "note.md") == "sub/note.md"
        with pytest.raises(PathOutsideVault):
            to_relative(vault, vault.parent / "secret.md")

    def test_resolve_folder(self, vault: Path) -> None:
        (vault / "memories.md").write_text("a note, not the folder")
        assert resolve_folder(vault, "memories") == ("memories", vault / "memories")
        assert resolve_folder(vault, "") == ("", vault)
        with pytest.raises(PathOutsideVault):
            resolve_folder(vault, "../elsewhere")


class TestListedNote:
    """A note the scan listed, read by the first index (`read_listed_note`): the same bytes as
    `read_raw_note`, the same refusals, checked on the file opened."""

    @pytest.fixture(params=["proc", "no-proc"])
    def system(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
        if request.param == "no-proc":  # no /proc/self/fd: each folder resolved, as before
            readlink = os.readlink

            def no_proc(path: str) -> str:
                if str(path).startswith("/proc/"):
                    raise FileNotFoundError(path)
                return readlink(path)
            monkeypatch.setattr(os, "readlink", no_proc)
        return str(request.param)

    def test_read_as_read_raw_note(self, vault: Path, tmp_path: Path, system: str) -> None:
        (vault / "alias.md").symlink_to(vault / "top.md")
        (tmp_path / "vault-link").symlink_to(vault)
        for root in (vault, tmp_path / "vault-link"):
            real_root = os.path.realpath(root)
            for rel in ("top.md", "sub/note.md", "alias.md"):
                assert read_listed_note(root, rel, real_root) == read_raw_note(root, rel)

    def test_a_symlink_out_of_the_vault_is_refused(self, vault: Path, system: str) -> None:
        (vault / "link.md").symlink_to(vault.parent / "secret.md")
        (vault / "outdir").symlink_to(vault.parent)
        for rel in ("link.md", "outdir/secret.md"):
            with pytest.raises(PathOutsideVault):
                read_listed_note(vault, rel, os.path.realpath(vault))

    def test_gone_since_the_scan(self, vault: Path, system: str) -> None:
        with pytest.raises(NotFound):
            read_listed_note(vault, "gone.md", os.path.realpath(vault))
        (vault / "folder.md").mkdir()
        with pytest.raises(NoteError, match="folder"):
            read_listed_note(vault, "folder.md", os.path.realpath(vault))
