"""The memory store: memories read and written under one lock (`MemoryStore`), the usage
journal, one call's snapshot of the vault and the catalog, and this device's id."""
