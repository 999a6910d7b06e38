"""The pure core of vaultmem: memory state, decay, decisions, ranking, planning, chunking.

Everything here is computation over plain values with an explicit `now`: no clock, no files,
no network, standard library only.
"""
