"""The vault: the only code in vaultmem that reads or writes note files."""
