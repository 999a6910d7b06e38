// The daemon's JSON shapes (docs/protocol.md), as far as the plugin reads them.
// Fields may be added by the daemon; none is renamed or removed.

export type MemoryStatus = "active" | "promoted" | "archived";
export type Decision = "keep" | "forget" | "promote";

export interface Memory {
  id: string;
  path: string;
  title: string;
  uri: string;
  tags: string[];
  type: string | null;
  status: MemoryStatus;
  pinned: boolean;
  source: string | null;
  created: string;
  last_used: string;
  use_count: number;
  strength: number;
  review_count: number;
  cross_domain_count: number;
  promoted_at: string | null;
  merged_into: string | null;
  /** The id of the newer memory that replaces this one (null: current). */
  superseded_by?: string | null;
  /** The id of the memory this one replaces. */
  supersedes?: string | null;
  /** A detected update not confirmed yet: the id of the memory this one may replace. */
  possible_update_of?: string | null;
  score: number;
  decision: Decision;
  reason: string;
  review_priority: number;
}

export interface ObservedMemory extends Memory {
  cross_domain: boolean;
}

export interface SearchResult {
  id: string | null;
  path: string;
  title: string;
  snippet: string;
  uri: string;
  tags: string[];
  relevance: number;
  score: number | null;
  final: number;
  review: boolean;
  /** Relevance at or above the daemon's match threshold (a real match, not just the nearest). */
  matched: boolean;
  /** For a memory a newer one replaces: that successor (path, title and uri null when gone). */
  superseded_by?: Successor | null;
}

export interface Successor {
  id: string;
  path: string | null;
  title: string | null;
  uri: string | null;
}

/** A proposed update in the review answer: the older memory, and `by` that may replace it. */
export interface ProposedUpdate extends Successor {
  path: string;
  title: string;
  reason: string;
  by: Successor;
}

/** What a search answer can promise: every answer carries it (an older daemon: only while
 * the index is built, `{done, total}`). */
export interface IndexState {
  state?: "starting" | "indexing" | "ready";
  by_words?: "partial" | "complete";
  by_meaning?: "partial" | "complete";
  done?: number;
  total?: number;
}

export interface SearchResponse {
  query: string;
  results: SearchResult[];
  indexing?: IndexState;
}

export interface Health {
  status: "ok";
  version: string;
  vault: string;
}

export interface IndexingProgress {
  running: boolean;
  /** "scan" or "rebuild": the index is being built (results are partial); "changes": edits. */
  kind?: "scan" | "rebuild" | "changes" | null;
  done: number;
  total: number;
  /** Changed notes not yet indexed. */
  queued?: number;
  error: string | null;
}

export interface DaemonInfo {
  pid: number;
  version: string;
  url: string | null;
  started: string;
  indexing?: IndexingProgress;
}

export interface Status {
  vault: string;
  notes: number;
  memories: { total: number };
  embedder: string;
  daemon?: DaemonInfo;
  sync?: SyncReport;
}

/** What a sync tool left behind: memory ids carried by several notes (conflict copies). */
export interface SyncReport {
  duplicates: { id: string; canonical: string; copies: { path: string; kind: string | null }[] }[];
  git_conflicts: string[];
}

export interface RelatedNote {
  path: string;
  title: string;
  similarity: number;
}

export interface RelatedResponse {
  path: string;
  related: RelatedNote[];
}

export interface ReviewResponse {
  items: Memory[];
  total: number;
  updates?: ProposedUpdate[];
}

export interface ObserveResponse {
  observed: ObservedMemory[];
}

export interface DecisionItem {
  id: string;
  path: string;
  decision: string;
  reason: string;
  score: number;
}

export interface Move {
  id: string;
  from: string;
  to: string;
  reason?: string;
}

export interface RestoreResponse {
  restored: Move;
  memory: Memory;
}

export interface PromoteResponse {
  dry_run: boolean;
  promote: DecisionItem[];
  promoted: Move[];
}
