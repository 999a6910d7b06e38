"""The `vaultmem` command."""
