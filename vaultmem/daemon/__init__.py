"""`vaultmem run`: the process, its watcher, scheduler and lock."""
