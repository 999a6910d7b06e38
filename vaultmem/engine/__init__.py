"""The use cases: engine, memory store, journal, indexer, lifecycle, consolidation."""
