import { afterEach, describe, expect, it, vi } from "vitest";
import {
  DaemonClient,
  DaemonError,
  describeError,
  isLoopbackUrl,
  isNotAMemory,
  parseJsonBody,
  REQUEST_TIMEOUT_MS,
  SLOW_REQUEST_TIMEOUT_MS,
} from "../src/client";
import { createDaemonClient, obsidianRequest } from "../src/transport";
import { BASE_URL, errorResponse, FakeDaemon, MEMORY_ID, MEMORY_PATH, memory, ok, TOKEN } from "./helpers";
import { setRequestUrlHandler, type RequestUrlParam } from "./obsidian-mock";

const GET_HEADERS = { Accept: "application/json", Authorization: `Bearer ${TOKEN}` };
const POST_HEADERS = { ...GET_HEADERS, "Content-Type": "application/json" };

/** A daemon answering every request with `{}`-like success, to inspect what was sent. */
function echoDaemon(): FakeDaemon {
  const daemon = new FakeDaemon();
  for (const [method, path] of [["GET", "/v1/health"], ["GET", "/v1/status"], ["POST", "/v1/search"],
    ["GET", `/v1/memories/${MEMORY_ID}`], ["GET", "/v1/memories/memories%2Fa%20b%2B%23.md"],
    ["POST", "/v1/touch"], ["POST", "/v1/observe"], ["GET", "/v1/review"], ["POST", "/v1/related"],
    ["POST", "/v1/promote"], ["POST", "/v1/pin"], ["POST", "/v1/restore"]] as const) {
    daemon.on(method, path, ok({ answered: path }));
  }
  return daemon;
}

async function sent(call: (client: DaemonClient) => Promise<unknown>) {
  const daemon = echoDaemon();
  await call(daemon.client());
  expect(daemon.requests).toHaveLength(1);
  const request = daemon.requests[0]!;
  return { url: request.url, method: request.method, headers: request.headers, body: request.parsed };
}

describe("DaemonClient requests", () => {
  it("health and status are GETs with the bearer token and no body", async () => {
    expect(await sent((c) => c.health())).toEqual(
      { url: `${BASE_URL}/v1/health`, method: "GET", headers: GET_HEADERS, body: undefined });
    expect(await sent((c) => c.status())).toEqual(
      { url: `${BASE_URL}/v1/status`, method: "GET", headers: GET_HEADERS, body: undefined });
  });

  it("search sends the query and only the options given, in the daemon's field names", async () => {
    expect(await sent((c) => c.search("ups battery"))).toEqual({
      url: `${BASE_URL}/v1/search`, method: "POST", headers: POST_HEADERS, body: { query: "ups battery" } });
    const full = await sent((c) => c.search("x", {
      topK: 5, tags: ["a"], allTags: ["b", "c"], type: "fact", status: ["active"], folder: "memories",
      windowDays: 7, memoriesOnly: true, includeReview: false, matchedOnly: true, minRelevance: 0.4,
    }));
    expect(full.body).toEqual({
      query: "x", top_k: 5, tags: ["a"], all_tags: ["b", "c"], type: "fact", status: ["active"],
      folder: "memories", window_days: 7, memories_only: true, include_review: false,
      matched_only: true, min_relevance: 0.4,
    });
  });

  it("get puts the id or the URL-encoded path in the URL", async () => {
    expect(await sent((c) => c.get(MEMORY_ID))).toMatchObject(
      { url: `${BASE_URL}/v1/memories/${MEMORY_ID}`, method: "GET", headers: GET_HEADERS });
    expect((await sent((c) => c.get("memories/a b+#.md"))).url)
      .toBe(`${BASE_URL}/v1/memories/memories%2Fa%20b%2B%23.md`);
  });

  it("touch sends the id and the boost flag", async () => {
    expect(await sent((c) => c.touch(MEMORY_ID))).toEqual({
      url: `${BASE_URL}/v1/touch`, method: "POST", headers: POST_HEADERS, body: { id: MEMORY_ID, boost: false } });
    expect((await sent((c) => c.touch(MEMORY_PATH, true))).body).toEqual({ id: MEMORY_PATH, boost: true });
  });

  it("observe sends ids and context tags (empty by default)", async () => {
    expect(await sent((c) => c.observe([MEMORY_ID], ["cooking"]))).toEqual({
      url: `${BASE_URL}/v1/observe`, method: "POST", headers: POST_HEADERS,
      body: { ids: [MEMORY_ID], context_tags: ["cooking"] } });
    expect((await sent((c) => c.observe([MEMORY_ID]))).body).toEqual({ ids: [MEMORY_ID], context_tags: [] });
  });

  it("review passes the limit as a query parameter (20 by default)", async () => {
    expect(await sent((c) => c.review(7))).toEqual(
      { url: `${BASE_URL}/v1/review?limit=7`, method: "GET", headers: GET_HEADERS, body: undefined });
    expect((await sent((c) => c.review())).url).toBe(`${BASE_URL}/v1/review?limit=20`);
  });

  it("related sends the id or path and top_k (5 by default)", async () => {
    expect(await sent((c) => c.related("Home.md", 3))).toEqual({
      url: `${BASE_URL}/v1/related`, method: "POST", headers: POST_HEADERS, body: { id: "Home.md", top_k: 3 } });
    expect((await sent((c) => c.related(MEMORY_ID))).body).toEqual({ id: MEMORY_ID, top_k: 5 });
  });

  it("promote sends the id, for real unless asked for a dry run", async () => {
    expect(await sent((c) => c.promote(MEMORY_ID))).toEqual({
      url: `${BASE_URL}/v1/promote`, method: "POST", headers: POST_HEADERS,
      body: { id: MEMORY_ID, dry_run: false } });
    expect((await sent((c) => c.promote(MEMORY_ID, true))).body).toEqual({ id: MEMORY_ID, dry_run: true });
  });

  it("setPinned sends the id or path and the pinned flag", async () => {
    expect(await sent((c) => c.setPinned(MEMORY_ID, true))).toEqual({
      url: `${BASE_URL}/v1/pin`, method: "POST", headers: POST_HEADERS, body: { id: MEMORY_ID, pinned: true } });
    expect(await sent((c) => c.setPinned(MEMORY_PATH, false))).toEqual({
      url: `${BASE_URL}/v1/pin`, method: "POST", headers: POST_HEADERS, body: { id: MEMORY_PATH, pinned: false } });
  });

  it("restore sends the id or path", async () => {
    expect(await sent((c) => c.restore(MEMORY_ID))).toEqual({
      url: `${BASE_URL}/v1/restore`, method: "POST", headers: POST_HEADERS, body: { id: MEMORY_ID } });
  });

  it("trims the base URL's trailing slashes and the token's whitespace", async () => {
    const daemon = echoDaemon();
    await daemon.client(`  ${TOKEN}\n`, `${BASE_URL}//`).health();
    expect(daemon.requests[0]!.url).toBe(`${BASE_URL}/v1/health`);
    expect(daemon.requests[0]!.headers["Authorization"]).toBe(`Bearer ${TOKEN}`);
  });

  it("returns the daemon's JSON body", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/touch", ok(memory({ use_count: 7 })))
      .on("POST", "/v1/pin", ok(memory({ pinned: true })));
    expect((await daemon.client().touch(MEMORY_ID, true)).use_count).toBe(7);
    expect((await daemon.client().setPinned(MEMORY_ID, true)).pinned).toBe(true);
  });
});

describe("DaemonClient errors", () => {
  it("turns the daemon's error body into a DaemonError with code, message and status", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/memories/Nope.md",
      errorResponse(404, "not_found", "no note 'Nope.md' in the vault"));
    const error = await daemon.client().get("Nope.md").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DaemonError);
    expect(error).toMatchObject({ code: "not_found", message: "no note 'Nope.md' in the vault", status: 404 });
  });

  it("reports a network failure as an unreachable daemon at its URL", async () => {
    const daemon = new FakeDaemon();
    daemon.reachable = false;
    const error = await daemon.client().status().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DaemonError);
    expect(error).toMatchObject({ code: "unreachable", status: 0,
      message: `no daemon answers at ${BASE_URL}` });
    expect((error as DaemonError).unreachable).toBe(true);
  });

  it("reports a body that is not the error shape as an http_error", async () => {
    const daemon = new FakeDaemon()
      .on("GET", "/v1/status", { status: 502, json: null })
      .on("GET", "/v1/health", ok(["not", "an", "object"]));
    await expect(daemon.client().status()).rejects.toMatchObject({ code: "http_error", status: 502,
      message: "vaultmem daemon answered HTTP 502 with no error details" });
    await expect(daemon.client().health()).rejects.toMatchObject({ code: "http_error", status: 200 });
  });

  it("passes a DaemonError raised by the transport through unchanged", async () => {
    const refusal = new DaemonError("config", "not here", 0);
    const client = new DaemonClient({ baseUrl: BASE_URL, token: TOKEN, request: () => Promise.reject(refusal) });
    await expect(client.health()).rejects.toBe(refusal);
  });

  it("describes errors for notices, with what to do about them", () => {
    expect(describeError(new DaemonError("unauthorized", "a valid bearer token is required", 401)))
      .toBe("a valid bearer token is required; paste the output of `vaultmem token --vault <your vault>` "
        + "in the vaultmem plugin settings");
    expect(describeError(new DaemonError("unreachable", `no daemon answers at ${BASE_URL}`, 0)))
      .toBe(`no daemon answers at ${BASE_URL}; start it with \`vaultmem run --vault <your vault>\` `
        + "(or install it as a service: `vaultmem service install --vault <your vault>`)");
    expect(describeError(new DaemonError("timeout", "the daemon did not answer within 10 s", 0)))
      .toBe("the daemon did not answer within 10 s; it may be busy indexing or stuck (restart it if this persists)");
    expect(describeError(new DaemonError("not_found", "no such memory", 404))).toBe("no such memory");
    expect(describeError(new Error("boom"))).toBe("boom");
    expect(describeError("text")).toBe("text");
  });

  it("recognises the daemon's 'regular note, not a memory' answer", () => {
    expect(isNotAMemory(new DaemonError("invalid_input",
      "Home.md is a regular note, not a memory (it has no stm_id)", 400))).toBe(true);
    expect(isNotAMemory(new DaemonError("invalid_input", "top_k must be an integer", 400))).toBe(false);
    expect(isNotAMemory(new DaemonError("not_found", "not a memory", 404))).toBe(false);
  });
});

describe("testConnection", () => {
  it("answers the daemon's version, vault name and vault path", async () => {
    const daemon = new FakeDaemon()
      .on("GET", "/v1/health", ok({ status: "ok", version: "0.1.0", vault: "vault" }))
      .on("GET", "/v1/status", ok({ vault: "/home/sam/vault", notes: 3, memories: { total: 1 }, embedder: "fake" }));
    expect(await daemon.client().testConnection())
      .toEqual({ ok: true, version: "0.1.0", vault: "vault", vaultPath: "/home/sam/vault" });
  });

  it("says when the token is rejected", async () => {
    const daemon = new FakeDaemon()
      .on("GET", "/v1/health", ok({ status: "ok", version: "0.1.0", vault: "vault" }))
      .on("GET", "/v1/status", errorResponse(401, "unauthorized", "a valid bearer token is required"));
    expect(await daemon.client().testConnection()).toEqual({ ok: false,
      error: 'vaultmem 0.1.0 answers for vault "vault", but a valid bearer token is required; paste the output '
        + "of `vaultmem token --vault <your vault>` in the vaultmem plugin settings" });
  });

  it("says when the daemon is unreachable", async () => {
    const daemon = new FakeDaemon();
    daemon.reachable = false;
    const result = await daemon.client().testConnection();
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(new RegExp(`^no daemon answers at ${BASE_URL}; start it with`));
  });
});

describe("helpers", () => {
  it("accepts only loopback http URLs", () => {
    for (const url of ["http://127.0.0.1:7345", "http://localhost:1", "http://[::1]:7345/", " http://127.0.0.1 "]) {
      expect(isLoopbackUrl(url), url).toBe(true);
    }
    for (const url of ["https://127.0.0.1:7345", "http://example.com", "http://10.0.0.1:7345",
      "http://127.0.0.1.example.com", "ftp://localhost", "not a url", ""]) {
      expect(isLoopbackUrl(url), url).toBe(false);
    }
  });

  it("parses JSON bodies, and gives null for empty or malformed ones", () => {
    expect(parseJsonBody('{"a": 1}')).toEqual({ a: 1 });
    expect(parseJsonBody("")).toBeNull();
    expect(parseJsonBody("<html>")).toBeNull();
  });
});

describe("Obsidian transport", () => {
  it("calls requestUrl without throwing on errors, with the JSON body and content type", async () => {
    const seen: RequestUrlParam[] = [];
    setRequestUrlHandler(async (param) => {
      seen.push(param);
      return { status: 404, headers: {}, text: '{"error": {"code": "not_found", "message": "gone"}}', json: null };
    });
    const response = await obsidianRequest({ url: `${BASE_URL}/v1/touch`, method: "POST",
      headers: { Authorization: "Bearer t" }, body: '{"id": "x"}' });
    expect(seen).toEqual([{ url: `${BASE_URL}/v1/touch`, method: "POST", headers: { Authorization: "Bearer t" },
      throw: false, body: '{"id": "x"}', contentType: "application/json" }]);
    expect(response).toEqual({ status: 404, json: { error: { code: "not_found", message: "gone" } } });
  });

  it("sends nothing to an address that is not on this machine", async () => {
    const daemon = new FakeDaemon();
    daemon.installAsRequestUrl();
    const client = createDaemonClient({ daemonUrl: "http://192.0.2.1:7345", token: TOKEN });
    await expect(client.health()).rejects.toMatchObject({ code: "config" });
    expect(daemon.requests).toEqual([]);
  });

  it("reaches the configured daemon through requestUrl", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/health", ok({ status: "ok", version: "0.1.0", vault: "v" }));
    daemon.installAsRequestUrl();
    const client = createDaemonClient({ daemonUrl: BASE_URL, token: TOKEN });
    expect(await client.health()).toEqual({ status: "ok", version: "0.1.0", vault: "v" });
    expect(daemon.requests[0]!.headers["Authorization"]).toBe(`Bearer ${TOKEN}`);
  });
});

describe("timeouts", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives up on a daemon that accepts a request but never answers", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon();
    daemon.hung = true;
    const outcome = daemon.client().status().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS - 1);
    expect(daemon.inFlight).toBe(1);
    let settled = false;
    void outcome.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(DaemonError);
    expect(error).toMatchObject({ code: "timeout", status: 0,
      message: `the daemon at ${BASE_URL} did not answer within 10 s` });
  });

  it("gives search and related notes the longer timeout (the model may be loading)", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon();
    daemon.hung = true;
    const search = daemon.client().search("ups").catch((error: unknown) => error);
    const related = daemon.client().related("Home.md").catch((error: unknown) => error);
    let done = 0;
    void search.then(() => (done += 1));
    void related.then(() => (done += 1));
    await vi.advanceTimersByTimeAsync(SLOW_REQUEST_TIMEOUT_MS - 1);
    expect(done).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(await search).toMatchObject({ code: "timeout", message: expect.stringContaining("within 30 s") });
    expect(await related).toMatchObject({ code: "timeout" });
  });

  it("leaves no timer behind once the daemon answers", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon().on("GET", "/v1/status", ok({ vault: "/v" }));
    await daemon.client().status();
    expect(vi.getTimerCount()).toBe(0);
    daemon.reachable = false;
    await daemon.client().status().catch(() => undefined);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("takes the timeout and the timers from its options", async () => {
    const scheduled: number[] = [];
    let fire: () => void = () => undefined;
    const client = new DaemonClient({ baseUrl: BASE_URL, token: TOKEN, timeoutMs: 1234,
      request: () => new Promise(() => undefined),
      timers: { set: (callback, ms) => {
        scheduled.push(ms);
        fire = callback;
        return 1;
      }, clear: () => undefined } });
    const outcome = client.health().catch((error: unknown) => error);
    expect(scheduled).toEqual([1234]);
    fire();
    expect(await outcome).toMatchObject({ code: "timeout", message: `the daemon at ${BASE_URL} did not answer within 1 s` });
  });
});

describe("without a token", () => {
  it("sends nothing that needs one, and never an empty bearer", async () => {
    const daemon = echoDaemon();
    const client = daemon.client("  ");
    expect(client.hasToken).toBe(false);
    for (const call of [() => client.status(), () => client.search("ups"), () => client.get(MEMORY_ID),
      () => client.touch(MEMORY_ID), () => client.observe([MEMORY_ID]), () => client.review(),
      () => client.related("Home.md"), () => client.promote(MEMORY_ID), () => client.setPinned(MEMORY_ID, true)]) {
      await expect(call()).rejects.toMatchObject({ code: "no_token", status: 0,
        message: expect.stringContaining("vaultmem token") });
    }
    expect(daemon.requests).toEqual([]);
  });

  it("still asks health (which needs no token), without an Authorization header", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/health", ok({ status: "ok", version: "0.1.0", vault: "vault" }));
    const result = await daemon.client("").testConnection();
    expect(daemon.routesCalled()).toEqual(["GET /v1/health"]);
    expect(daemon.requests[0]!.headers).toEqual({ Accept: "application/json" });
    expect(result).toEqual({ ok: false, error: 'vaultmem 0.1.0 answers for vault "vault", but no token is set: '
      + "run `vaultmem token --vault <your vault>` and paste what it prints in the vaultmem plugin settings" });
  });
});
