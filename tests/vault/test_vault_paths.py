"""Vault path resolution: nothing outside the vault is ever reachable."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmem.errors import InvalidInput, NotFound, PathOutsideVault
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
