// Shared test doubles: a fake daemon behind the client's injected transport, memory fixtures,
// and a plugin host over the mocked App.

import type { App as ObsidianApp } from "obsidian";
import { DaemonClient, type HttpMethod, type HttpRequest, type HttpResponse } from "../src/client";
import type { PluginHost } from "../src/host";
import { DEFAULT_SETTINGS, type VaultmemSettings } from "../src/settings";
import type { Memory, SearchResult } from "../src/types";
import {
  App,
  setRequestUrlHandler,
  type RequestUrlParam,
  type RequestUrlResponse,
  type TFile,
} from "./obsidian-mock";

export const TOKEN = "test-token";
export const BASE_URL = "http://127.0.0.1:7345";

export function asApp(app: App): ObsidianApp {
  return app as unknown as ObsidianApp;
}

export interface Recorded extends HttpRequest {
  /** `METHOD /path?query`, without the base URL. */
  route: string;
  parsed: unknown;
}

type Answer = HttpResponse | ((body: unknown) => HttpResponse | Promise<HttpResponse>);

/** Answers requests by `METHOD /path` (query ignored); unknown routes are a 404 error body. */
export class FakeDaemon {
  readonly requests: Recorded[] = [];
  private readonly routes = new Map<string, Answer>();
  reachable = true;
  /** Accepts every request and does not answer until `unstick()` (a stuck daemon). */
  hung = false;
  private readonly stuck: Array<() => void> = [];
  /** Requests sent and not answered yet. */
  inFlight = 0;

  on(method: HttpMethod, path: string, answer: Answer): this {
    this.routes.set(`${method} ${path}`, answer);
    return this;
  }

  readonly request = async (request: HttpRequest): Promise<HttpResponse> => {
    if (!this.reachable) {
      throw new TypeError("fetch failed: connect ECONNREFUSED");
    }
    const url = new URL(request.url);
    const parsed: unknown = request.body === undefined ? undefined : JSON.parse(request.body);
    this.requests.push({ ...request, route: `${request.method} ${url.pathname}${url.search}`, parsed });
    this.inFlight += 1;
    try {
      if (this.hung) {
        await new Promise<void>((resume) => this.stuck.push(resume));
      }
      const answer = this.routes.get(`${request.method} ${url.pathname}`);
      if (answer === undefined) {
        return errorResponse(404, "not_found", `no route ${url.pathname}`);
      }
      return await (typeof answer === "function" ? answer(parsed) : answer);
    } finally {
      this.inFlight -= 1;
    }
  };

  /** The daemon answers again: the stuck requests get their answers now. */
  unstick(): void {
    this.hung = false;
    this.stuck.splice(0).forEach((resume) => resume());
  }

  client(token = TOKEN, baseUrl = BASE_URL): DaemonClient {
    return new DaemonClient({ baseUrl, token, request: this.request });
  }

  /** Serves Obsidian's mocked `requestUrl` (for code that builds its own client). */
  installAsRequestUrl(): void {
    setRequestUrlHandler(async (param: RequestUrlParam): Promise<RequestUrlResponse> => {
      const request: HttpRequest = { url: param.url, method: param.method as HttpMethod,
        headers: param.headers ?? {} };
      if (typeof param.body === "string") {
        request.body = param.body;
      }
      const response = await this.request(request);
      const text = response.json === null ? "" : JSON.stringify(response.json);
      return { status: response.status, headers: {}, text, json: response.json };
    });
  }

  routesCalled(): string[] {
    return this.requests.map((request) => request.route);
  }
}

export function ok(json: unknown): HttpResponse {
  return { status: 200, json };
}

export function errorResponse(status: number, code: string, message: string): HttpResponse {
  return { status, json: { error: { code, message } } };
}

export const MEMORY_ID = "78aa9298-2987-4a08-95d5-e28301a643bb";
export const MEMORY_PATH = "memories/2026-09-21 nas-ups-battery-replaced.md";

export function memory(overrides: Partial<Memory> = {}): Memory {
  return {
    id: MEMORY_ID,
    path: MEMORY_PATH,
    title: "NAS UPS battery replaced",
    uri: "obsidian://open?vault=vault&file=memories%2F2026-09-21%20nas-ups-battery-replaced",
    tags: ["homelab", "hardware", "power"],
    type: "fact",
    status: "active",
    pinned: false,
    source: null,
    created: "2026-09-23T04:59:36+00:00",
    last_used: "2026-09-23T04:59:36+00:00",
    use_count: 1,
    strength: 1.0,
    review_count: 0,
    cross_domain_count: 0,
    promoted_at: null,
    merged_into: null,
    score: 0.602411,
    decision: "keep",
    reason: "score 0.602 between forget threshold 0.05 and promote threshold 0.65",
    review_priority: 0.0,
    ...overrides,
  };
}

export function searchResult(overrides: Partial<SearchResult> = {}): SearchResult {
  return {
    id: MEMORY_ID,
    path: MEMORY_PATH,
    title: "NAS UPS battery replaced",
    snippet: "The battery of the APC Back-UPS Pro 900 that powers the NAS…",
    uri: "obsidian://open?vault=vault&file=x",
    tags: ["homelab"],
    relevance: 0.5,
    score: 0.602411,
    final: 0.4769,
    review: false,
    matched: true,
    ...overrides,
  };
}

/** The folder the mocked vault is in (see obsidian-mock's FileSystemAdapter). */
export const VAULT_PATH = "/home/sam/vault";

/** A vault with one memory note and one regular note. */
export function vaultApp(): { app: App; memoryFile: TFile; noteFile: TFile } {
  const app = new App();
  const memoryFile = app.addNote(MEMORY_PATH, { stm_id: MEMORY_ID, tags: ["homelab", "power"] }, ["ups"]);
  const noteFile = app.addNote("Home.md", { tags: ["home"] });
  return { app, memoryFile, noteFile };
}

export class TestHost implements PluginHost {
  settings: VaultmemSettings = { ...DEFAULT_SETTINGS, token: TOKEN };
  refreshes = 0;

  constructor(readonly mockApp: App, private readonly daemon: FakeDaemon) {}

  get app(): ObsidianApp {
    return asApp(this.mockApp);
  }

  client(): DaemonClient {
    return this.daemon.client();
  }

  refreshStatus(): void {
    this.refreshes += 1;
  }
}

/** Lets pending promise callbacks (and one macrotask turn) run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A promise with its resolve function, to answer a request later. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
