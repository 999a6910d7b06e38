import { describe, expect, it } from "vitest";
import { DaemonError } from "../src/client";
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
  vaultApp,
} from "./helpers";
import { FakeElement } from "./obsidian-mock";

const STATUS: Status = { vault: "/v", notes: 3, memories: { total: 1 }, embedder: "fake" };

function statusWith(running: boolean, done: number, total: number): Status {
  return { ...STATUS, daemon: { pid: 1, version: "0.1.0", url: null, started: "",
    indexing: { running, done, total, error: null } } };
}

describe("status bar text", () => {
  it("shows a memory's status and score", () => {
    expect(noteText({ kind: "memory", memory: { status: "active", score: 0.602411, decision: "keep" } }))
      .toBe("memory: active, score 0.60");
    expect(noteText({ kind: "memory", memory: { status: "promoted", score: 2.8535, decision: "promote" } }))
      .toBe("memory: promoted, score 2.85");
    expect(noteText({ kind: "memory", memory: { status: "active", score: 1.2, decision: "promote" } }))
      .toBe("memory: active, score 1.20, ready to promote");
  });

  it("says 'not a memory' for a regular note and nothing without one", () => {
    expect(noteText({ kind: "regular" })).toBe("not a memory");
    expect(noteText({ kind: "none" })).toBe("");
    expect(noteText({ kind: "unknown" })).toBe("");
  });

  it("shows the daemon's state", () => {
    expect(daemonText({ kind: "checking" })).toBe("vaultmem: connecting…");
    expect(daemonText({ kind: "connected" })).toBe("vaultmem: connected");
    expect(daemonText({ kind: "indexing", done: 12, total: 33 })).toBe("vaultmem: indexing 12 of 33");
    expect(daemonText({ kind: "unreachable" })).toBe("vaultmem: unreachable");
    expect(daemonText({ kind: "unauthorized" })).toBe("vaultmem: token rejected");
    expect(daemonText({ kind: "error", message: "boom" })).toBe("vaultmem: error");
  });

  it("derives the daemon's state from status and from errors", () => {
    expect(daemonStateFromStatus(statusWith(true, 12, 33))).toEqual({ kind: "indexing", done: 12, total: 33 });
    expect(daemonStateFromStatus(statusWith(false, 33, 33))).toEqual({ kind: "connected" });
    expect(daemonStateFromStatus(STATUS)).toEqual({ kind: "connected" });
    expect(daemonStateFromError(new DaemonError("unreachable", "x", 0))).toEqual({ kind: "unreachable" });
    expect(daemonStateFromError(new DaemonError("unauthorized", "x", 401))).toEqual({ kind: "unauthorized" });
    expect(daemonStateFromError(new DaemonError("internal", "it broke", 500)))
      .toEqual({ kind: "error", message: "it broke" });
  });

  it("joins the note's part and the daemon's part", () => {
    expect(statusBarText({ kind: "memory", memory: { status: "active", score: 0.6, decision: "keep" } },
      { kind: "connected" })).toBe("memory: active, score 0.60 · vaultmem: connected");
    expect(statusBarText({ kind: "regular" }, { kind: "unreachable" }))
      .toBe("not a memory · vaultmem: unreachable");
    expect(statusBarText({ kind: "none" }, { kind: "indexing", done: 3, total: 10 }))
      .toBe("vaultmem: indexing 3 of 10");
    expect(statusBarTooltip({ kind: "error", message: "it broke" })).toBe("it broke");
    expect(statusBarTooltip({ kind: "connected" })).toBe("vaultmem: connected");
  });
});

describe("StatusUpdater", () => {
  function setup(daemon: FakeDaemon) {
    const { app, memoryFile, noteFile } = vaultApp();
    const el = new FakeElement();
    const updater = new StatusUpdater(el as unknown as HTMLElement,
      { app: asApp(app), client: () => daemon.client() });
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
    expect(el.textContent).toBe("not a memory · vaultmem: indexing 5 of 9");
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
});
