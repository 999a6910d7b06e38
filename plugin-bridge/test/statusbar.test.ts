import { afterEach, describe, expect, it, vi } from "vitest";
import { DaemonError, REQUEST_TIMEOUT_MS } from "../src/client";
import { StatusUpdater } from "../src/status-updater";
import {
  daemonStateFromError,
  daemonStateFromStatus,
  daemonText,
  noteText,
  statusBarText,
  statusBarTooltip,
} from "../src/statusbar";
import type { Status } from "../src/types";
import {
  asApp,
  deferred,
  errorResponse,
  FakeDaemon,
  MEMORY_ID,
  memory,
  ok,
  settle,
  VAULT_PATH,
  vaultApp,
} from "./helpers";
import { FakeElement } from "./obsidian-mock";

const STATUS: Status = { vault: VAULT_PATH, notes: 3, memories: { total: 1 }, embedder: "fake" };
const LOCAL = { name: "vault", path: VAULT_PATH };

function statusWith(running: boolean, done: number, total: number,
  kind?: "scan" | "rebuild" | "changes"): Status {
  return { ...STATUS, daemon: { pid: 1, version: "0.1.0", url: null, started: "",
    indexing: { running, done, total, error: null, ...(kind ? { kind } : {}) } } };
}

describe("status bar text", () => {
  it("shows a memory's status and score", () => {
    expect(noteText({ kind: "memory", memory: { status: "active", score: 0.602411, decision: "keep" } }))
      .toBe("memory: active, score 0.60");
    expect(noteText({ kind: "memory", memory: { status: "promoted", score: 2.8535, decision: "promote" } }))
      .toBe("memory: promoted, score 2.85");
    expect(noteText({ kind: "memory", memory: { status: "active", score: 1.2, decision: "promote" } }))
      .toBe("memory: active, score 1.20, ready to promote");
    expect(noteText({ kind: "memory", memory: { status: "active", score: 1.0, decision: "forget", superseded_by: "n1" } }))
      .toBe("memory: active, score 1.00, superseded by a newer memory");
  });

  it("says 'not a memory' for a regular note and nothing without one", () => {
    expect(noteText({ kind: "regular" })).toBe("not a memory");
    expect(noteText({ kind: "none" })).toBe("");
    expect(noteText({ kind: "unknown" })).toBe("");
  });

  it("counts the sync conflict copies the daemon reports", () => {
    const copy = (path: string) => ({ path, kind: "syncthing" });
    const status: Status = { ...STATUS, sync: { git_conflicts: [], duplicates: [
      { id: "a", canonical: "m/A.md", copies: [copy("m/A.sync-conflict-20261124-101010-ABCDEFG.md"),
        copy("m/A (conflicted copy 2026-11-24).md")] },
      { id: "b", canonical: "m/B.md", copies: [copy("m/B 2.md")] }] } };
    const state = daemonStateFromStatus(status, LOCAL);
    expect(state).toEqual({ kind: "connected", copies: 3 });
    expect(daemonText(state)).toBe("vaultmem: connected, 3 sync conflict copies");
    expect(statusBarTooltip(state)).toContain("vaultmem reconcile --apply");
    expect(daemonText(daemonStateFromStatus({ ...STATUS, sync: { git_conflicts: [], duplicates: [] } })))
      .toBe("vaultmem: connected");
  });

  it("shows the daemon's state", () => {
    expect(daemonText({ kind: "checking" })).toBe("vaultmem: connecting…");
    expect(daemonText({ kind: "connected" })).toBe("vaultmem: connected");
    expect(daemonText({ kind: "indexing", done: 120, total: 1003 }))
      .toBe("vaultmem: index building, 120 of 1,003 notes");
    expect(daemonText({ kind: "unreachable", message: "x" })).toBe("vaultmem: unreachable");
    expect(daemonText({ kind: "not-responding", message: "x" })).toBe("vaultmem: not responding");
    expect(daemonText({ kind: "unauthorized", message: "x" })).toBe("vaultmem: token rejected");
    expect(daemonText({ kind: "no-token" })).toBe("vaultmem: token needed");
    expect(daemonText({ kind: "other-vault", message: "x" })).toBe("vaultmem: serves another vault");
    expect(daemonText({ kind: "error", message: "boom" })).toBe("vaultmem: error");
  });

  it("derives the daemon's state from status and from errors", () => {
    expect(daemonStateFromStatus(statusWith(true, 12, 33))).toEqual({ kind: "indexing", done: 12, total: 33 });
    expect(daemonStateFromStatus(statusWith(true, 12, 33, "scan"))).toEqual({ kind: "indexing", done: 12, total: 33 });
    expect(daemonStateFromStatus(statusWith(true, 0, 900, "rebuild"))).toEqual({ kind: "indexing", done: 0, total: 900 });
    // a batch of edits being indexed, or a start-up check with nothing to embed, is not a build
    expect(daemonStateFromStatus(statusWith(true, 1, 9, "changes"))).toEqual({ kind: "connected" });
    expect(daemonStateFromStatus(statusWith(true, 0, 0, "scan"))).toEqual({ kind: "connected" });
    expect(statusBarTooltip({ kind: "indexing", done: 1, total: 2 }))
      .toContain("search results are partial until the index is built");
    expect(daemonStateFromStatus(statusWith(false, 33, 33))).toEqual({ kind: "connected" });
    expect(daemonStateFromStatus(STATUS)).toEqual({ kind: "connected" });
    expect(daemonStateFromStatus(STATUS, LOCAL)).toEqual({ kind: "connected" });
    expect(daemonStateFromError(new DaemonError("unreachable", "x", 0)))
      .toEqual({ kind: "unreachable", message: expect.stringContaining("x; start it with `vaultmem run") });
    expect(daemonStateFromError(new DaemonError("timeout", "x", 0)))
      .toEqual({ kind: "not-responding", message: expect.stringContaining("x; it may be busy") });
    expect(daemonStateFromError(new DaemonError("unauthorized", "x", 401)))
      .toEqual({ kind: "unauthorized", message: expect.stringContaining("x; paste the output of `vaultmem token") });
    expect(daemonStateFromError(new DaemonError("no_token", "x", 0))).toEqual({ kind: "no-token" });
    expect(daemonStateFromError(new DaemonError("internal", "it broke", 500)))
      .toEqual({ kind: "error", message: "it broke" });
  });

  it("reports a daemon that serves another vault", () => {
    const other = { ...STATUS, vault: "/home/sam/Work", daemon: { pid: 1, version: "0.1.0",
      url: "http://127.0.0.1:7345", started: "" } };
    expect(daemonStateFromStatus(other, LOCAL)).toEqual({ kind: "other-vault", message:
      "the daemon at http://127.0.0.1:7345 serves another vault (/home/sam/Work), not this one (/home/sam/vault): "
      + "start one for this vault (`vaultmem run --vault <this vault>`, on another port if both run) "
      + "and set its address in the vaultmem plugin settings" });
    // The same folder written differently, or reached through a link (same name), is this vault.
    expect(daemonStateFromStatus({ ...STATUS, vault: `${VAULT_PATH}/` }, LOCAL).kind).toBe("connected");
    expect(daemonStateFromStatus({ ...STATUS, vault: "/mnt/data/vault" }, LOCAL).kind).toBe("connected");
    expect(daemonStateFromStatus({ ...STATUS, vault: "C:\\Users\\sam\\vault" },
      { name: "vault", path: "C:/Users/sam/vault" }).kind).toBe("connected");
    // Without a folder (not on disk), the name decides.
    expect(daemonStateFromStatus(other, { name: "vault", path: null }).kind).toBe("other-vault");
  });

  it("joins the note's part and the daemon's part", () => {
    expect(statusBarText({ kind: "memory", memory: { status: "active", score: 0.6, decision: "keep" } },
      { kind: "connected" })).toBe("memory: active, score 0.60 · vaultmem: connected");
    expect(statusBarText({ kind: "regular" }, { kind: "unreachable", message: "x" }))
      .toBe("not a memory · vaultmem: unreachable");
    expect(statusBarText({ kind: "none" }, { kind: "indexing", done: 3, total: 10 }))
      .toBe("vaultmem: index building, 3 of 10 notes");
    expect(statusBarTooltip({ kind: "error", message: "it broke" }))
      .toBe("it broke. Click to open the vaultmem settings.");
    expect(statusBarTooltip({ kind: "connected" })).toBe("vaultmem: connected. Click to open the vaultmem settings.");
    expect(statusBarTooltip({ kind: "no-token" })).toBe("No token yet: paste the daemon's token in the vaultmem "
      + "plugin settings (`vaultmem token --vault <your vault>` prints it). Click to open the vaultmem settings.");
  });
});

describe("StatusUpdater", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup(daemon: FakeDaemon, token?: string) {
    const { app, memoryFile, noteFile } = vaultApp();
    const el = new FakeElement();
    const updater = new StatusUpdater(el as unknown as HTMLElement,
      { app: asApp(app), client: () => daemon.client(token) });
    return { app, el, updater, memoryFile, noteFile };
  }

  it("shows the open memory's score, fetched by its stm_id", async () => {
    const daemon = new FakeDaemon()
      .on("GET", `/v1/memories/${MEMORY_ID}`, ok(memory()))
      .on("GET", "/v1/status", ok(statusWith(false, 3, 3)));
    const { app, el, updater, memoryFile } = setup(daemon);
    expect(el.textContent).toBe("vaultmem: connecting…");
    app.workspace.openFileForTest(memoryFile);
    await updater.refresh();
    expect(el.textContent).toBe("memory: active, score 0.60 · vaultmem: connected");
    expect(daemon.routesCalled()).toEqual(["GET /v1/status", `GET /v1/memories/${MEMORY_ID}`]);
  });

  it("says 'not a memory' for a regular note without asking the daemon about it", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/status", ok(statusWith(true, 5, 9)));
    const { app, el, updater, noteFile } = setup(daemon);
    app.workspace.openFileForTest(noteFile);
    await updater.refresh();
    expect(el.textContent).toBe("not a memory · vaultmem: index building, 5 of 9 notes");
    expect(daemon.routesCalled()).toEqual(["GET /v1/status"]);
  });

  it("believes the daemon when it says the note is not a memory", async () => {
    const daemon = new FakeDaemon().on("GET", `/v1/memories/${MEMORY_ID}`,
      errorResponse(400, "invalid_input", "x.md is a regular note, not a memory (it has no stm_id)"));
    const { app, el, updater, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await updater.refreshNote();
    expect(el.textContent).toBe("not a memory · vaultmem: connecting…");
  });

  it("shows an unreachable daemon", async () => {
    const daemon = new FakeDaemon();
    daemon.reachable = false;
    const { app, el, updater, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await updater.refresh();
    expect(el.textContent).toBe("vaultmem: unreachable");
  });

  it("keeps the latest note's answer when an earlier one arrives late", async () => {
    const slow = deferred<ReturnType<typeof ok>>();
    const daemon = new FakeDaemon().on("GET", `/v1/memories/${MEMORY_ID}`, () => slow.promise);
    const { app, el, updater, memoryFile, noteFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    const first = updater.refreshNote();
    app.workspace.openFileForTest(noteFile);
    await updater.refreshNote();
    slow.resolve(ok(memory()));
    await first;
    await settle();
    expect(el.textContent).toBe("not a memory · vaultmem: connecting…");
  });

  it("shows a hung daemon as not responding within the timeout", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon();
    daemon.hung = true;
    const { el, updater } = setup(daemon);
    void updater.refreshDaemon();
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS - 1);
    expect(el.textContent).toBe("vaultmem: connecting…");
    await vi.advanceTimersByTimeAsync(1);
    expect(el.textContent).toBe("vaultmem: not responding");
    expect(el.getAttr("aria-label")).toContain("did not answer within 10 s");
  });

  it("starts no new status request while one is pending", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon();
    daemon.hung = true;
    const { updater } = setup(daemon);
    const first = updater.refreshDaemon();
    for (let i = 0; i < 5; i++) {
      expect(updater.refreshDaemon()).toBe(first);
    }
    expect(daemon.routesCalled()).toEqual(["GET /v1/status"]);
    expect(updater.polling).toBe(true);
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
    expect(updater.polling).toBe(false);
    // Timed out, but the request is still open: polls send nothing new until it ends.
    await updater.refreshDaemon();
    expect(daemon.routesCalled()).toEqual(["GET /v1/status"]);
    daemon.unstick();
    await vi.advanceTimersByTimeAsync(0);
    await updater.refreshDaemon();
    expect(daemon.routesCalled()).toEqual(["GET /v1/status", "GET /v1/status"]);
  });

  it("does not ask a stuck daemon about the open note either", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon();
    daemon.hung = true;
    const { app, el, updater, memoryFile, noteFile } = setup(daemon);
    void updater.refreshDaemon();
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
    for (const file of [memoryFile, noteFile, memoryFile]) {
      app.workspace.openFileForTest(file);
      await updater.refreshNote();
    }
    expect(daemon.routesCalled()).toEqual(["GET /v1/status"]);
    expect(el.textContent).toBe("vaultmem: not responding");
    daemon.unstick();
  });

  it("asks again after a pending request when the settings changed meanwhile", async () => {
    const slow = deferred<ReturnType<typeof ok>>();
    let calls = 0;
    const daemon = new FakeDaemon().on("GET", "/v1/status", () => {
      calls += 1;
      return calls === 1 ? slow.promise : ok(statusWith(true, 1, 2));
    });
    const { el, updater } = setup(daemon);
    const first = updater.refreshDaemon();
    void updater.refreshDaemon(true);
    slow.resolve(ok(statusWith(false, 2, 2)));
    await first;
    expect(calls).toBe(2);
    expect(el.textContent).toBe("vaultmem: index building, 1 of 2 notes");
  });

  it("asks for the token and sends nothing without one", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/status", ok(STATUS));
    const { app, el, updater, memoryFile } = setup(daemon, "");
    app.workspace.openFileForTest(memoryFile);
    await updater.refresh();
    expect(el.textContent).toBe("vaultmem: token needed");
    expect(updater.daemonState).toEqual({ kind: "no-token" });
    expect(daemon.requests).toEqual([]);
  });

  it("reports a daemon that serves another vault", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/status", ok({ ...STATUS, vault: "/home/sam/Work" }));
    const { el, updater } = setup(daemon);
    await updater.refreshDaemon();
    expect(el.textContent).toBe("vaultmem: serves another vault");
    expect(el.getAttr("aria-label")).toContain("serves another vault (/home/sam/Work), not this one (/home/sam/vault)");
  });
});
