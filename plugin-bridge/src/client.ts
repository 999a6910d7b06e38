// A client for the vaultmem daemon's HTTP routes (docs/protocol.md).
// No Obsidian import: the transport is injected, so the same module runs in the plugin
// (wrapping `requestUrl`) and in Node (wrapping `fetch`) for tests.

import type {
  Health,
  Memory,
  ObserveResponse,
  PromoteResponse,
  RelatedResponse,
  RestoreResponse,
  ReviewResponse,
  SearchResponse,
  Status,
} from "./types";

export type HttpMethod = "GET" | "POST";

export interface HttpRequest {
  url: string;
  method: HttpMethod;
  headers: Record<string, string>;
  body?: string;
}

export interface HttpResponse {
  status: number;
  /** The parsed body, or null when the body is empty or not JSON. */
  json: unknown;
}

/** Sends one request; rejects only when no answer arrived (network failure). */
export type RequestFn = (request: HttpRequest) => Promise<HttpResponse>;

/** Timers as the client uses them (injected in tests; `window`'s by default). */
export interface Timers {
  set(callback: () => void, ms: number): number;
  clear(handle: number): void;
}

export const WINDOW_TIMERS: Timers = {
  set: (callback, ms) => window.setTimeout(callback, ms),
  clear: (handle) => window.clearTimeout(handle),
};

/** How long a request may take before the daemon counts as not responding. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Search and related notes may have to load the embedding model first (~10 s on a cold start). */
export const SLOW_REQUEST_TIMEOUT_MS = 30_000;

export interface DaemonClientOptions {
  baseUrl: string;
  token: string;
  request: RequestFn;
  /** Per request; search and related get `slowTimeoutMs`. */
  timeoutMs?: number;
  slowTimeoutMs?: number;
  timers?: Timers;
}

/** An error answered by the daemon (its `code`), or `unreachable` when none answered. */
export class DaemonError extends Error {
  readonly code: string;
  /** The HTTP status; 0 when the daemon could not be reached. */
  readonly status: number;
  /** For a timeout: settles when the abandoned request finally ends (answered or failed). */
  readonly settled: Promise<void> | null;

  constructor(code: string, message: string, status: number, settled: Promise<void> | null = null) {
    super(message);
    this.name = "DaemonError";
    this.code = code;
    this.status = status;
    this.settled = settled;
  }

  get unreachable(): boolean {
    return this.code === UNREACHABLE;
  }
}

export const UNREACHABLE = "unreachable";
/** No answer within the timeout: the daemon accepted the request but is busy or stuck. */
export const TIMEOUT = "timeout";
/** No token configured: nothing that needs one is sent. */
export const NO_TOKEN = "no_token";

export interface SearchOptions {
  topK?: number;
  tags?: string[];
  allTags?: string[];
  type?: string;
  status?: Array<"active" | "promoted" | "archived">;
  folder?: string;
  windowDays?: number;
  memoriesOnly?: boolean;
  includeReview?: boolean;
  /** Only results above the daemon's match threshold (`matched: true`). */
  matchedOnly?: boolean;
  /** Only results with at least this relevance (0..1). */
  minRelevance?: number;
}

export type ConnectionResult =
  | { ok: true; version: string; vault: string; vaultPath: string }
  | { ok: false; error: string };

export class DaemonClient {
  readonly baseUrl: string;
  private readonly token: string;
  private readonly request: RequestFn;
  private readonly timeoutMs: number;
  private readonly slowTimeoutMs: number;
  private readonly timers: Timers;

  constructor(options: DaemonClientOptions) {
    this.baseUrl = options.baseUrl.trim().replace(/\/+$/, "");
    this.token = options.token.trim();
    this.request = options.request;
    this.timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.slowTimeoutMs = options.slowTimeoutMs ?? SLOW_REQUEST_TIMEOUT_MS;
    this.timers = options.timers ?? WINDOW_TIMERS;
  }

  /** False until a token is configured; then every request but health carries it. */
  get hasToken(): boolean {
    return this.token !== "";
  }

  /** Needs no token: tells whether a daemon answers at all, and which vault it serves. */
  health(): Promise<Health> {
    return this.call<Health>("GET", "/v1/health", undefined, { needsToken: false });
  }

  status(): Promise<Status> {
    return this.call<Status>("GET", "/v1/status");
  }

  search(query: string, options: SearchOptions = {}): Promise<SearchResponse> {
    return this.call<SearchResponse>("POST", "/v1/search", searchBody(query, options), { slow: true });
  }

  /** One memory by id or vault path; a regular note is a 400 `invalid_input`. */
  get(idOrPath: string): Promise<Memory> {
    return this.call<Memory>("GET", `/v1/memories/${encodeURIComponent(idOrPath)}`);
  }

  /** Records a use; with `boost`, strength +0.1. */
  touch(idOrPath: string, boost = false): Promise<Memory> {
    return this.call<Memory>("POST", "/v1/touch", { id: idOrPath, boost });
  }

  observe(ids: string[], contextTags: string[] = []): Promise<ObserveResponse> {
    return this.call<ObserveResponse>("POST", "/v1/observe", { ids, context_tags: contextTags });
  }

  review(limit = 20): Promise<ReviewResponse> {
    return this.call<ReviewResponse>("GET", `/v1/review?limit=${encodeURIComponent(limit)}`);
  }

  related(idOrPath: string, topK = 5): Promise<RelatedResponse> {
    return this.call<RelatedResponse>("POST", "/v1/related", { id: idOrPath, top_k: topK }, { slow: true });
  }

  /** Promotes one memory on request (moves it to the promoted folder). */
  promote(id: string, dryRun = false): Promise<PromoteResponse> {
    return this.call<PromoteResponse>("POST", "/v1/promote", { id, dry_run: dryRun });
  }

  /** Pins (never forgotten, archived or merged away) or unpins a memory; not a use. */
  setPinned(idOrPath: string, pinned: boolean): Promise<Memory> {
    return this.call<Memory>("POST", "/v1/pin", { id: idOrPath, pinned });
  }

  /** Brings an archived memory back: active, used now, out of the archive folder. */
  restore(idOrPath: string): Promise<RestoreResponse> {
    return this.call<RestoreResponse>("POST", "/v1/restore", { id: idOrPath });
  }

  /** Health (is it up, which vault) then status (is the token accepted). Never throws. */
  async testConnection(): Promise<ConnectionResult> {
    let health: Health | null = null;
    try {
      health = await this.health();
      const status = await this.status();
      return { ok: true, version: health.version, vault: health.vault, vaultPath: status.vault };
    } catch (error) {
      const found = health === null ? "" : `vaultmem ${health.version} answers for vault "${health.vault}", but `;
      return { ok: false, error: found + describeError(error) };
    }
  }

  private async call<T>(method: HttpMethod, path: string, body?: object, how: CallOptions = {}): Promise<T> {
    if (how.needsToken !== false && !this.hasToken) {
      throw new DaemonError(NO_TOKEN, "no token is set: run `vaultmem token --vault <your vault>` and paste "
        + "what it prints in the vaultmem plugin settings", 0);
    }
    const url = this.baseUrl + path;
    const request: HttpRequest = { url, method, headers: this.headers(body !== undefined) };
    if (body !== undefined) {
      request.body = JSON.stringify(body);
    }
    const response = await this.send(request, how.slow === true ? this.slowTimeoutMs : this.timeoutMs);
    if (response.status >= 200 && response.status < 300 && isObject(response.json)) {
      return response.json as T;
    }
    throw errorFromResponse(response);
  }

  /**
   * The transport's answer, or a DaemonError: unreachable, or timeout after `timeoutMs` (the
   * transport cannot cancel a request; the error's `settled` tells when it has ended).
   */
  private send(request: HttpRequest, timeoutMs: number): Promise<HttpResponse> {
    return new Promise<HttpResponse>((resolve, reject) => {
      const sent = this.request(request);
      const settled = sent.then(() => undefined, () => undefined);
      const timer = this.timers.set(() => reject(new DaemonError(TIMEOUT,
        `the daemon at ${this.baseUrl} did not answer within ${Math.round(timeoutMs / 1000)} s`, 0, settled)),
      timeoutMs);
      sent.then(resolve, (error: unknown) => reject(error instanceof DaemonError ? error
        : new DaemonError(UNREACHABLE, `no daemon answers at ${this.baseUrl}`, 0)))
        .finally(() => this.timers.clear(timer));
    });
  }

  private headers(withBody: boolean): Record<string, string> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.hasToken) {
      headers["Authorization"] = `Bearer ${this.token}`;
    }
    if (withBody) {
      headers["Content-Type"] = "application/json";
    }
    return headers;
  }
}

interface CallOptions {
  /** False only for health, which the daemon answers without a token. */
  needsToken?: boolean;
  /** Search and related: the longer timeout. */
  slow?: boolean;
}

function searchBody(query: string, options: SearchOptions): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    query,
    top_k: options.topK,
    tags: options.tags,
    all_tags: options.allTags,
    type: options.type,
    status: options.status,
    folder: options.folder,
    window_days: options.windowDays,
    memories_only: options.memoriesOnly,
    include_review: options.includeReview,
    matched_only: options.matchedOnly,
    min_relevance: options.minRelevance,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** A response body as JSON, or null when it is empty or not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") {
    return null;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** True for an `http://` URL on this machine (the only place the daemon listens). */
export function isLoopbackUrl(url: string): boolean {
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname);
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The daemon's `{"error": {"code", "message"}}`, or a generic error for anything else. */
export function errorFromResponse(response: HttpResponse): DaemonError {
  const error = isObject(response.json) ? response.json["error"] : undefined;
  if (isObject(error) && typeof error["code"] === "string" && typeof error["message"] === "string") {
    return new DaemonError(error["code"], error["message"], response.status);
  }
  const what = response.status >= 200 && response.status < 300 ? "an unexpected body" : "no error details";
  return new DaemonError("http_error", `vaultmem daemon answered HTTP ${response.status} with ${what}`,
    response.status);
}

/** A message fit for a notice: the daemon's own message, with what to do about it. */
export function describeError(error: unknown): string {
  if (error instanceof DaemonError) {
    switch (error.code) {
      case "unauthorized":
        return `${error.message}; paste the output of \`vaultmem token --vault <your vault>\` in the vaultmem `
          + "plugin settings";
      case UNREACHABLE:
        return `${error.message}; start it with \`vaultmem run --vault <your vault>\` (or install it as a `
          + "service: `vaultmem service install --vault <your vault>`)";
      case TIMEOUT:
        return `${error.message}; it may be busy indexing or stuck (restart it if this persists)`;
      default:
        return error.message;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

/** True when the daemon says the note is a regular note rather than a memory. */
export function isNotAMemory(error: unknown): boolean {
  return error instanceof DaemonError && error.code === "invalid_input" && /not a memory/.test(error.message);
}
