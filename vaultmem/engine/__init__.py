"""The use cases (search, uses, views, status, lifecycle, consolidation, reconcile, restore,
updates, memory admin, undo) and what they share (views, moves, the write lane); below them
the index-writing pipeline (`vaultmem.pipeline`) and the memory store (`vaultmem.store`).
`app.build_app` hands each the parts it uses."""
