"""vaultmem: a memory for AI assistants that lives in your Obsidian vault."""

__version__ = "0.1.0"
