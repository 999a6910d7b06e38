"""The index-writing pipeline: the single index writer (`IndexSync`), its gate, the indexer
and what it works through (slices, words first, note records, progress)."""
