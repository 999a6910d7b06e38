// The client against a real daemon, started by tests/daemon/test_plugin_client.py on a copy of
// sample-vault/ (skipped unless VAULTMEM_TEST_URL, VAULTMEM_TEST_TOKEN and VAULTMEM_TEST_VAULT
// are set). Requests go through Node's fetch with the Origin Obsidian sends; the notes' files are
// read from disk to check what the daemon wrote.

import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  DaemonClient,
  DaemonError,
  isNotAMemory,
  parseJsonBody,
  type HttpRequest,
  type HttpResponse,
} from "../src/client";

const DAEMON_URL = process.env["VAULTMEM_TEST_URL"] ?? "";
const TOKEN = process.env["VAULTMEM_TEST_TOKEN"] ?? "";
const VAULT = process.env["VAULTMEM_TEST_VAULT"] ?? "";
const CONFIGURED = DAEMON_URL !== "" && TOKEN !== "" && VAULT !== "";

const UPS_ID = "78aa9298-2987-4a08-95d5-e28301a643bb";
const UPS_PATH = "memories/2026-09-21 nas-ups-battery-replaced.md";
const PIHOLE_PATH = "memories/2026-09-20 pihole-container-restart-after-update.md";
const SESSIONS_ID = "dfc888ea-0e58-4d2e-8499-fe37117edeba";
const SESSIONS_PATH = "memories/2026-11-15 crumb-server-side-sessions-in-redis.md";

async function nodeRequest(request: HttpRequest): Promise<HttpResponse> {
  const init: RequestInit = { method: request.method, headers: { ...request.headers, Origin: "app://obsidian.md" } };
  if (request.body !== undefined) {
    init.body = request.body;
  }
  const response = await fetch(request.url, init);
  return { status: response.status, json: parseJsonBody(await response.text()) };
}

function client(token = TOKEN): DaemonClient {
  return new DaemonClient({ baseUrl: DAEMON_URL, token, request: nodeRequest });
}

function readNote(path: string): string {
  return readFileSync(join(VAULT, path), "utf-8");
}

function frontmatterValue(text: string, key: string): string | null {
  const match = new RegExp(`^${key}:\\s*(.+?)\\s*$`, "m").exec(text);
  return match?.[1] ?? null;
}

/** Polls the note on disk until `check` holds (the daemon flushes usage every 0.5 s). */
async function waitForNote(path: string, check: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let text = "";
  while (Date.now() < deadline) {
    text = existsSync(join(VAULT, path)) ? readNote(path) : "";
    if (check(text)) {
      return text;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${path} did not reach the expected state; last content:\n${text}`);
}

describe.skipIf(!CONFIGURED)("client against a real daemon", { timeout: 60_000 }, () => {
  it("connects: version, vault, token", async () => {
    const result = await client().testConnection();
    expect(result).toMatchObject({ ok: true, version: expect.any(String) });
    if (result.ok) {
      expect(realpathSync(result.vaultPath)).toBe(realpathSync(VAULT));
    }
    const refused = await client("wrong-token").testConnection();
    expect(refused.ok).toBe(false);
    await expect(client("wrong-token").status()).rejects.toMatchObject({ code: "unauthorized", status: 401 });
  });

  it("searches and finds the memory with its score", async () => {
    const response = await client().search("ups battery", { topK: 5 });
    expect(response.query).toBe("ups battery");
    const hit = response.results.find((result) => result.id === UPS_ID);
    expect(hit).toMatchObject({ path: UPS_PATH, title: "NAS UPS battery replaced" });
    expect(hit?.score).toBeGreaterThan(0);
    const onlyMemories = await client().search("ups battery", { topK: 5, memoriesOnly: true });
    expect(onlyMemories.results.every((result) => result.id !== null)).toBe(true);
  });

  it("searches for real matches only: each result says it matched; a nonsense query finds nothing", async () => {
    const all = await client().search("ups battery", { topK: 10 });
    expect(all.results.every((result) => typeof result.matched === "boolean")).toBe(true);
    const real = await client().search("ups battery", { topK: 10, matchedOnly: true });
    expect(real.results.length).toBeGreaterThan(0);
    expect(real.results.every((result) => result.matched)).toBe(true);
    expect(real.results.some((result) => result.id === UPS_ID)).toBe(true);
    const nonsense = await client().search("qwxz vlorp zzyzx", { topK: 10, matchedOnly: true });
    expect(nonsense.results).toEqual([]);
  });

  it("without a token: health answers, nothing else is sent", async () => {
    const noToken = client("");
    expect(await noToken.health()).toMatchObject({ status: "ok" });
    await expect(noToken.status()).rejects.toMatchObject({ code: "no_token" });
    const result = await noToken.testConnection();
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toContain("but no token is set");
  });

  it("reinforces (touch with boost) and the note's frontmatter follows", async () => {
    const before = await client().get(UPS_ID);
    const after = await client().touch(UPS_ID, true);
    expect(after.use_count).toBe(before.use_count + 1);
    expect(after.strength).toBeCloseTo(before.strength + 0.1, 6);
    const text = await waitForNote(UPS_PATH,
      (note) => frontmatterValue(note, "stm_use_count") === String(after.use_count));
    expect(Number(frontmatterValue(text, "stm_strength"))).toBeCloseTo(after.strength, 6);
    expect(text).toContain("# NAS UPS battery replaced");
    expect((await client().get(UPS_PATH)).use_count).toBe(after.use_count);
  });

  it("observes with context tags and records a cross-domain use on disk", async () => {
    const before = await client().get(PIHOLE_PATH);
    const response = await client().observe([before.id], ["cooking"]);
    expect(response.observed).toHaveLength(1);
    const observed = response.observed[0]!;
    expect(observed.use_count).toBe(before.use_count + 1);
    expect(observed.cross_domain).toBe(true);
    await waitForNote(PIHOLE_PATH, (note) =>
      frontmatterValue(note, "stm_use_count") === String(observed.use_count)
      && frontmatterValue(note, "stm_cross_domain_count") === String(observed.cross_domain_count));
  });

  it("pins and unpins a memory, and the note's frontmatter follows", async () => {
    const before = await client().get(UPS_ID);
    expect(before.pinned).toBe(false);
    const pinned = await client().setPinned(UPS_ID, true);
    expect(pinned).toMatchObject({ id: UPS_ID, path: UPS_PATH, pinned: true });
    expect(pinned.use_count).toBe(before.use_count);  // pinning is not a use
    await waitForNote(UPS_PATH, (note) => frontmatterValue(note, "stm_pinned") === "true");
    expect((await client().get(UPS_PATH)).pinned).toBe(true);
    const unpinned = await client().setPinned(UPS_PATH, false);
    expect(unpinned).toMatchObject({ id: UPS_ID, pinned: false });
    const text = await waitForNote(UPS_PATH, (note) => frontmatterValue(note, "stm_pinned") === null
      && frontmatterValue(note, "stm_id") === UPS_ID);
    expect(text).toContain("# NAS UPS battery replaced");
    expect((await client().get(UPS_ID)).pinned).toBe(false);
  });

  it("lists the review queue: active memories in the danger zone, most urgent first", async () => {
    const review = await client().review(3);
    expect(review.items.length).toBeGreaterThan(0);
    expect(review.items.length).toBeLessThanOrEqual(3);
    expect(review.total).toBeGreaterThanOrEqual(review.items.length);
    const priorities = review.items.map((item) => item.review_priority);
    expect(priorities.every((priority) => priority > 0)).toBe(true);
    expect([...priorities].sort((a, b) => b - a)).toEqual(priorities);
    for (const item of review.items) {
      expect(item.status).toBe("active");
      expect(existsSync(join(VAULT, item.path))).toBe(true);
    }
  });

  it("finds related notes that exist in the vault", async () => {
    const related = await client().related(UPS_PATH, 3);
    expect(related.path).toBe(UPS_PATH);
    expect(related.related.length).toBeGreaterThan(0);
    for (const note of related.related) {
      expect(note.path).not.toBe(UPS_PATH);
      expect(existsSync(join(VAULT, note.path))).toBe(true);
    }
    expect((await client().related("Home.md", 2)).related.length).toBeGreaterThan(0);
  });

  it("promotes a memory on request: moved to the promoted folder with its new status", async () => {
    const response = await client().promote(SESSIONS_ID);
    expect(response.dry_run).toBe(false);
    expect(response.promoted).toHaveLength(1);
    const move = response.promoted[0]!;
    expect(move).toMatchObject({ id: SESSIONS_ID, from: SESSIONS_PATH });
    expect(move.to.startsWith("STM/")).toBe(true);
    const text = await waitForNote(move.to, (note) => frontmatterValue(note, "stm_status") === "promoted");
    expect(frontmatterValue(text, "stm_id")).toContain(SESSIONS_ID);
    expect(existsSync(join(VAULT, SESSIONS_PATH))).toBe(false);
    expect(await client().get(SESSIONS_ID)).toMatchObject({ status: "promoted", path: move.to });
    await expect(client().promote(SESSIONS_ID)).rejects.toMatchObject({ code: "invalid_input", status: 400 });
  });

  it("maps the daemon's errors", async () => {
    const missing = await client().get("Nope.md").catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(DaemonError);
    expect(missing).toMatchObject({ code: "not_found", status: 404 });
    const regular = await client().get("Home.md").catch((error: unknown) => error);
    expect(isNotAMemory(regular)).toBe(true);
    await expect(client().get("../outside.md")).rejects.toMatchObject({ code: "path_outside_vault" });
  });
});
