// A client for the vaultmem daemon's HTTP routes (docs/protocol.md).
// No Obsidian import: the transport is injected, so the same module runs in the plugin
// (wrapping `requestUrl`) and in Node (wrapping `fetch`) for tests.

import type {
  Health,
  Memory,
  ObserveResponse,
  PromoteResponse,
  RelatedResponse,
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

export interface DaemonClientOptions {
  baseUrl: string;
  token: string;
  request: RequestFn;
}

/** An error answered by the daemon (its `code`), or `unreachable` when none answered. */
export class DaemonError extends Error {
  readonly code: string;
  /** The HTTP status; 0 when the daemon could not be reached. */
  readonly status: number;

  constructor(code: string, message: string, status: number) {
    super(message);
    this.name = "DaemonError";
    this.code = code;
    this.status = status;
  }

  get unreachable(): boolean {
    return this.code === UNREACHABLE;
  }
}

export const UNREACHABLE = "unreachable";

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
}

export type ConnectionResult =
  | { ok: true; version: string; vault: string; vaultPath: string }
  | { ok: false; error: string };

export class DaemonClient {
  readonly baseUrl: string;
  private readonly token: string;
  private readonly request: RequestFn;

  constructor(options: DaemonClientOptions) {
    this.baseUrl = options.baseUrl.trim().replace(/\/+$/, "");
    this.token = options.token.trim();
    this.request = options.request;
  }

  health(): Promise<Health> {
    return this.call<Health>("GET", "/v1/health");
  }

  status(): Promise<Status> {
    return this.call<Status>("GET", "/v1/status");
  }

  search(query: string, options: SearchOptions = {}): Promise<SearchResponse> {
    return this.call<SearchResponse>("POST", "/v1/search", searchBody(query, options));
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
    return this.call<RelatedResponse>("POST", "/v1/related", { id: idOrPath, top_k: topK });
  }

  /** Promotes one memory on request (moves it to the promoted folder). */
  promote(id: string, dryRun = false): Promise<PromoteResponse> {
    return this.call<PromoteResponse>("POST", "/v1/promote", { id, dry_run: dryRun });
  }

  /** Pins (never forgotten, archived or merged away) or unpins a memory; not a use. */
  setPinned(idOrPath: string, pinned: boolean): Promise<Memory> {
    return this.call<Memory>("POST", "/v1/pin", { id: idOrPath, pinned });
  }

  /** Health (is it up, which vault) then status (is the token accepted). Never throws. */
  async testConnection(): Promise<ConnectionResult> {
    try {
      const health = await this.health();
      const status = await this.status();
      return { ok: true, version: health.version, vault: health.vault, vaultPath: status.vault };
    } catch (error) {
      return { ok: false, error: describeError(error) };
    }
  }

  private async call<T>(method: HttpMethod, path: string, body?: object): Promise<T> {
    const url = this.baseUrl + path;
    const request: HttpRequest = { url, method, headers: this.headers(body !== undefined) };
    if (body !== undefined) {
      request.body = JSON.stringify(body);
    }
    let response: HttpResponse;
    try {
      response = await this.request(request);
    } catch (error) {
      if (error instanceof DaemonError) {
        throw error;
      }
      throw new DaemonError(UNREACHABLE, `vaultmem daemon unreachable at ${this.baseUrl}`, 0);
    }
    if (response.status >= 200 && response.status < 300 && isObject(response.json)) {
      return response.json as T;
    }
    throw errorFromResponse(response);
  }

  private headers(withBody: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      Accept: "application/json",
      Authorization: `Bearer ${this.token}`,
    };
    if (withBody) {
      headers["Content-Type"] = "application/json";
    }
    return headers;
  }
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

/** A message fit for a notice: the daemon's own message, with a hint for a bad token. */
export function describeError(error: unknown): string {
  if (error instanceof DaemonError) {
    if (error.code === "unauthorized") {
      return `${error.message}; paste it in the vaultmem plugin settings`;
    }
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** True when the daemon says the note is a regular note rather than a memory. */
export function isNotAMemory(error: unknown): boolean {
  return error instanceof DaemonError && error.code === "invalid_input" && /not a memory/.test(error.message);
}
