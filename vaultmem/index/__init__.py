"""The derived search index: embeddings, LanceDB storage, vector and full-text search.

This package is the only place in vaultmem that imports lancedb, torch or
sentence-transformers. Everything here can be thrown away and rebuilt from the vault.
"""
