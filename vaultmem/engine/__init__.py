"""The use cases (search, uses, views, status, lifecycle, consolidation, reconcile, restore,
updates, memory admin, undo) and what they share: the memory store, the index writer, the
indexer; `app.build_app` hands each the parts it uses."""
