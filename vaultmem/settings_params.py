"""Settings turned into the plain parameter values the parts take.

Part of the composition root (`app.py`, which wires the parts): every other part receives
these values, never Settings, and has no defaults of its own (every default lives in
`config.Settings`). The use cases' tunables (`EngineParams` and the decay, policy and
reinforcement values in it), the supersede rule's, the indexer's and the index's options, the
embedding model's runtime options, and the save gate's content limits the MCP tools publish.
"""

from __future__ import annotations

from vaultmem.config import Settings
from vaultmem.core.decay import DecayParams
from vaultmem.core.decisions import Policy
from vaultmem.core.reinforce import ReinforceParams
from vaultmem.engine.memory_updates import UpdateParams
from vaultmem.engine.parts import EngineParams
from vaultmem.index.base import IndexOptions
from vaultmem.index.embedders import EmbedderOptions
from vaultmem.pipeline.indexer import IndexerOptions


def decay_params(settings: Settings) -> DecayParams:
    s = settings
    return DecayParams(
        model=s.decay_model, half_life_days=s.half_life_days, alpha=s.power_law_alpha,
        beta=s.use_count_beta, two_component_weight=s.two_component_weight,
        fast_lambda=s.two_component_fast_lambda, slow_lambda=s.two_component_slow_lambda,
        type_half_lives=s.type_half_lives,
    )


def policy(settings: Settings) -> Policy:
    s = settings
    return Policy(
        promote_threshold=s.promote_threshold, promote_min_uses=s.promote_min_uses,
        promote_use_count=s.promote_fast_use_count,
        promote_window_days=s.promote_fast_window_days, forget_threshold=s.forget_threshold,
        forget_grace_hours=s.forget_grace_hours, max_active_memories=s.max_active_memories,
    )


def content_chars(settings: Settings) -> tuple[int, int]:
    """The save gate's content limits (shortest, longest), which the MCP tools publish."""
    return settings.min_content_chars, settings.max_content_chars


def reinforce_params(settings: Settings) -> ReinforceParams:
    s = settings
    return ReinforceParams(
        boost_step=s.boost_step, strength_max=s.strength_max,
        cross_domain_threshold=s.cross_domain_threshold, review_low=s.review_band_low,
        review_high=s.review_band_high, feedback_penalty=s.feedback_penalty,
        spaced_use_hours=s.spaced_use_hours,
    )


def engine_params(settings: Settings, vault_name: str) -> EngineParams:
    s = settings
    return EngineParams(
        vault_name=vault_name, decay=decay_params(s), policy=policy(s),
        reinforce=reinforce_params(s), top_k=s.search_top_k, review_fraction=s.review_fraction,
        related_links=s.related_links, memory_folder=s.memory_folder,
        promoted_folder=s.promoted_folder, archive_folder=s.archive_folder,
        cluster_threshold=s.cluster_threshold, cluster_max_size=s.cluster_max_size,
        merge_cohesion=s.merge_cohesion, review_cohesion=s.review_cohesion,
        near_duplicate_cosine=s.near_duplicate_cosine, min_content_chars=s.min_content_chars,
        max_content_chars=s.max_content_chars, resave_window_hours=s.resave_window_hours,
        similar_memory_cosine=s.similar_memory_cosine,
    )


def update_params(settings: Settings) -> UpdateParams:
    return UpdateParams(update_cosine=settings.update_cosine,
                        auto_supersede=settings.auto_supersede,
                        memory_folder=settings.memory_folder)


def index_options(settings: Settings) -> IndexOptions:
    s = settings
    return IndexOptions(optimize_every=s.optimize_every_writes, index_cache_mb=s.index_cache_mb,
                        metadata_cache_mb=s.metadata_cache_mb)


def embedder_options(settings: Settings) -> EmbedderOptions:
    s = settings
    return EmbedderOptions(
        runtime=s.embedding_runtime, cache=s.model_cache(), query_prompt=s.embedding_query_prompt,
        passage_prompt=s.embedding_passage_prompt, threads=s.embedding_threads,
        batch_size=s.embedding_batch_size,
    )


def indexer_options(settings: Settings) -> IndexerOptions:
    s = settings
    return IndexerOptions(chunk_max_chars=s.chunk_max_chars, chunk_min_chars=s.chunk_min_chars)
