import { describe, expect, it } from "vitest";
import {
  openSearch,
  pinCurrentMemory,
  promoteCurrentMemory,
  registerCommands,
  reinforceCurrentNote,
  showRelatedNotes,
  showReviewQueue,
  unpinCurrentMemory,
} from "../src/commands";
import { MemorySearchModal, resultMeta } from "../src/search-modal";
import { RELATED_VIEW_TYPE, REVIEW_VIEW_TYPE, RelatedView, ReviewView } from "../src/views";
import {
  errorResponse,
  FakeDaemon,
  MEMORY_ID,
  MEMORY_PATH,
  memory,
  ok,
  searchResult,
  settle,
  TestHost,
  vaultApp,
} from "./helpers";
import { FakeElement, Modal, Notice, Plugin, type App, type WorkspaceLeaf } from "./obsidian-mock";

function setup(daemon = new FakeDaemon()) {
  const { app, memoryFile, noteFile } = vaultApp();
  const host = new TestHost(app, daemon);
  return { app, host, daemon, memoryFile, noteFile };
}

/** Registers the plugin's views on the mocked app, as main.ts does. */
function registerViews(app: App, host: TestHost): Plugin {
  const plugin = new Plugin(app, { id: "vaultmem-bridge", name: "vaultmem", version: "0", minAppVersion: "0",
    description: "", author: "" });
  plugin.registerView(REVIEW_VIEW_TYPE, (leaf) => new ReviewView(leaf as never, host) as never);
  plugin.registerView(RELATED_VIEW_TYPE, (leaf) => new RelatedView(leaf as never, host) as never);
  return plugin;
}

function contentOf(leaf: WorkspaceLeaf | undefined): FakeElement {
  const view = leaf?.view as unknown as { contentEl: FakeElement } | undefined;
  if (view === undefined) {
    throw new Error("no view");
  }
  return view.contentEl;
}

describe("registered commands", () => {
  it("registers the seven commands, the note ones only with a note open", async () => {
    const { app, host, memoryFile } = setup(new FakeDaemon().on("POST", "/v1/touch", ok(memory())));
    const plugin = new Plugin(app, { id: "vaultmem-bridge", name: "vaultmem", version: "0", minAppVersion: "0",
      description: "", author: "" });
    registerCommands(plugin as never, host);
    expect([...app.commands.keys()]).toEqual(["vaultmem-bridge:search", "vaultmem-bridge:reinforce-current-note",
      "vaultmem-bridge:promote-current-memory", "vaultmem-bridge:pin-current-memory",
      "vaultmem-bridge:unpin-current-memory", "vaultmem-bridge:show-review-queue",
      "vaultmem-bridge:show-related-notes"]);
    const reinforce = app.commands.get("vaultmem-bridge:reinforce-current-note")!;
    expect(reinforce.checkCallback!(true)).toBe(false);
    app.workspace.openFileForTest(memoryFile);
    expect(reinforce.checkCallback!(true)).toBe(true);
    reinforce.checkCallback!(false);
    await settle();
    expect(Notice.messages).toEqual(['vaultmem: reinforced "NAS UPS battery replaced": score 0.60, 1 uses']);
    app.commands.get("vaultmem-bridge:search")!.callback!();
    expect(Modal.opened[0]).toBeInstanceOf(MemorySearchModal);
  });
});

describe("search memories", () => {
  it("fetches live results and opens the chosen note", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/search", (body) => ok({
      query: (body as { query: string }).query,
      results: [searchResult(), searchResult({ id: null, path: "Home.md", title: "Home", score: null })],
    }));
    const { app, host } = setup(daemon);
    const modal = openSearch(host);
    expect(Modal.opened).toEqual([modal]);
    expect(await modal.getSuggestions("  ")).toEqual([]);
    expect(daemon.requests).toEqual([]);

    const results = await modal.getSuggestions(" ups battery ");
    expect(daemon.requests.map((r) => r.parsed)).toEqual([{ query: "ups battery", top_k: 20 }]);
    expect(results.map((r) => r.title)).toEqual(["NAS UPS battery replaced", "Home"]);

    const el = new FakeElement();
    modal.renderSuggestion(results[0]!, el as unknown as HTMLElement);
    expect(el.find("vaultmem-item-title")!.textContent).toBe("NAS UPS battery replaced");
    expect(el.find("vaultmem-item-meta")!.textContent)
      .toBe(`memory, score 0.60 · relevance 0.50 · ${MEMORY_PATH}`);
    expect(el.find("vaultmem-snippet")!.textContent).toContain("APC Back-UPS");

    modal.onChooseSuggestion(results[1]!);
    await settle();
    expect(app.workspace.getActiveFile()?.path).toBe("Home.md");
  });

  it("labels regular notes and review items", () => {
    expect(resultMeta(searchResult({ id: null, score: null, path: "Home.md", relevance: 0.333 })))
      .toBe("note · relevance 0.33 · Home.md");
    expect(resultMeta(searchResult({ review: true })))
      .toBe(`memory, score 0.60 · relevance 0.50 · due for review · ${MEMORY_PATH}`);
  });

  it("shows the error as the empty-state text", async () => {
    const daemon = new FakeDaemon();
    daemon.reachable = false;
    const { host } = setup(daemon);
    const modal = openSearch(host);
    expect(await modal.getSuggestions("ups")).toEqual([]);
    expect(modal.emptyStateText).toBe("vaultmem daemon unreachable at http://127.0.0.1:7345");
  });

  it("says when a chosen note is not in this vault", async () => {
    const { host } = setup();
    openSearch(host).onChooseSuggestion(searchResult({ path: "elsewhere/Other.md" }));
    await settle();
    expect(Notice.messages).toEqual(["vaultmem: elsewhere/Other.md is not in this vault"]);
  });
});

describe("reinforce current note", () => {
  it("touches a memory with a boost, by its stm_id", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/touch", ok(memory({ use_count: 2, score: 0.71 })));
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await reinforceCurrentNote(host);
    expect(daemon.requests.map((r) => [r.route, r.parsed]))
      .toEqual([["POST /v1/touch", { id: MEMORY_ID, boost: true }]]);
    expect(Notice.messages).toEqual(['vaultmem: reinforced "NAS UPS battery replaced": score 0.71, 2 uses']);
    expect(host.refreshes).toBe(1);
  });

  it("says 'not a memory' for a regular note, without a request", async () => {
    const { app, host, daemon, noteFile } = setup();
    app.workspace.openFileForTest(noteFile);
    await reinforceCurrentNote(host);
    expect(daemon.requests).toEqual([]);
    expect(Notice.messages).toEqual(['vaultmem: "Home" is not a memory']);
    expect(host.refreshes).toBe(0);
  });

  it("says 'not a memory' when the daemon says so", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/touch",
      errorResponse(400, "invalid_input", "x is a regular note, not a memory (it has no stm_id)"));
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await reinforceCurrentNote(host);
    expect(Notice.messages).toEqual([`vaultmem: "${memoryFile.basename}" is not a memory`]);
  });

  it("asks for a note when none is open, and reports daemon errors", async () => {
    const daemon = new FakeDaemon();
    daemon.reachable = false;
    const { app, host, memoryFile } = setup(daemon);
    await reinforceCurrentNote(host);
    app.workspace.openFileForTest(memoryFile);
    await reinforceCurrentNote(host);
    expect(Notice.messages).toEqual(["vaultmem: open a note first",
      "vaultmem: vaultmem daemon unreachable at http://127.0.0.1:7345"]);
  });
});

describe("promote current memory", () => {
  it("promotes the open memory now and says where it went", async () => {
    const to = "STM/2026-09-21 nas-ups-battery-replaced.md";
    const daemon = new FakeDaemon().on("POST", "/v1/promote", ok({ dry_run: false,
      promote: [{ id: MEMORY_ID, path: MEMORY_PATH, decision: "promote", reason: "promoted on request", score: 0 }],
      promoted: [{ id: MEMORY_ID, from: MEMORY_PATH, to, reason: "promoted on request" }] }));
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await promoteCurrentMemory(host);
    expect(daemon.requests.map((r) => [r.route, r.parsed]))
      .toEqual([["POST /v1/promote", { id: MEMORY_ID, dry_run: false }]]);
    expect(Notice.messages).toEqual([`vaultmem: promoted "2026-09-21 nas-ups-battery-replaced" to ${to}`]);
    expect(host.refreshes).toBe(1);
  });

  it("reports the daemon's refusal and refuses regular notes itself", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/promote",
      errorResponse(400, "invalid_input", `${MEMORY_PATH} is promoted, not active`));
    const { app, host, memoryFile, noteFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await promoteCurrentMemory(host);
    app.workspace.openFileForTest(noteFile);
    await promoteCurrentMemory(host);
    expect(Notice.messages).toEqual([`vaultmem: ${MEMORY_PATH} is promoted, not active`,
      'vaultmem: "Home" is not a memory']);
    expect(daemon.requests).toHaveLength(1);
  });
});

describe("pin and unpin current memory", () => {
  const pinRoute = (body: unknown) => ok(memory({ pinned: (body as { pinned: boolean }).pinned }));

  it("pins the open memory by its stm_id and says it will not be forgotten", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/pin", pinRoute);
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await pinCurrentMemory(host);
    expect(daemon.requests.map((r) => [r.route, r.parsed]))
      .toEqual([["POST /v1/pin", { id: MEMORY_ID, pinned: true }]]);
    expect(Notice.messages).toEqual(["vaultmem: Pinned: NAS UPS battery replaced — it will not be forgotten"]);
    expect(host.refreshes).toBe(1);
  });

  it("unpins the open memory by its stm_id", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/pin", pinRoute);
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await unpinCurrentMemory(host);
    expect(daemon.requests.map((r) => [r.route, r.parsed]))
      .toEqual([["POST /v1/pin", { id: MEMORY_ID, pinned: false }]]);
    expect(Notice.messages).toEqual(["vaultmem: Unpinned: NAS UPS battery replaced"]);
    expect(host.refreshes).toBe(1);
  });

  it("runs from the registered commands", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/pin", pinRoute);
    const { app, host, memoryFile } = setup(daemon);
    registerCommands(new Plugin(app, { id: "vaultmem-bridge", name: "vaultmem", version: "0", minAppVersion: "0",
      description: "", author: "" }) as never, host);
    const pin = app.commands.get("vaultmem-bridge:pin-current-memory")!;
    const unpin = app.commands.get("vaultmem-bridge:unpin-current-memory")!;
    expect(pin.name).toBe("Pin current memory");
    expect(unpin.name).toBe("Unpin current memory");
    expect(pin.checkCallback!(true)).toBe(false);
    app.workspace.openFileForTest(memoryFile);
    expect(pin.checkCallback!(true)).toBe(true);
    pin.checkCallback!(false);
    await settle();
    unpin.checkCallback!(false);
    await settle();
    expect(daemon.requests.map((r) => r.parsed))
      .toEqual([{ id: MEMORY_ID, pinned: true }, { id: MEMORY_ID, pinned: false }]);
  });

  it("says 'not a memory' for a regular note, without a request", async () => {
    const { app, host, daemon, noteFile } = setup();
    app.workspace.openFileForTest(noteFile);
    await pinCurrentMemory(host);
    await unpinCurrentMemory(host);
    expect(daemon.requests).toEqual([]);
    expect(Notice.messages).toEqual(['vaultmem: "Home" is not a memory', 'vaultmem: "Home" is not a memory']);
    expect(host.refreshes).toBe(0);
  });

  it("says 'not a memory' when the daemon says so", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/pin",
      errorResponse(400, "invalid_input", "x is a regular note, not a memory (it has no stm_id)"));
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await pinCurrentMemory(host);
    expect(Notice.messages).toEqual([`vaultmem: "${memoryFile.basename}" is not a memory`]);
  });

  it("shows the daemon's errors as notices", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/pin",
      errorResponse(404, "not_found", `no memory with id ${MEMORY_ID}`));
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await pinCurrentMemory(host);
    daemon.reachable = false;
    await unpinCurrentMemory(host);
    expect(Notice.messages).toEqual([`vaultmem: no memory with id ${MEMORY_ID}`,
      "vaultmem: vaultmem daemon unreachable at http://127.0.0.1:7345"]);
    expect(host.refreshes).toBe(0);
  });
});

describe("review queue view", () => {
  const fading = memory({ id: "a2cd", path: "memories/restic.md", title: "Sam prefers Restic",
    score: 0.262144, review_priority: 0.985254, last_used: "2026-11-12T09:00:00+00:00" });

  it("lists danger-zone memories with their scores; a click opens the note", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/review", ok({ items: [fading], total: 3 }));
    const { app, host } = setup(daemon);
    app.addNote("memories/restic.md", { stm_id: "a2cd" });
    registerViews(app, host);
    await showReviewQueue(host);

    const leaves = app.workspace.getLeavesOfType(REVIEW_VIEW_TYPE);
    expect(leaves).toHaveLength(1);
    expect(app.workspace.revealed).toEqual(leaves);
    expect(daemon.routesCalled()).toEqual(["GET /v1/review?limit=50"]);
    const content = contentOf(leaves[0]);
    expect(content.find("vaultmem-summary")!.textContent).toBe("1 of 3 fading memories");
    const items = content.findAll("vaultmem-item");
    expect(items.map((item) => item.find("vaultmem-item-title")!.textContent)).toEqual(["Sam prefers Restic"]);
    expect(items[0]!.find("vaultmem-item-meta")!.textContent)
      .toBe("score 0.26 · review priority 0.99 · last used 2026-11-12");
    items[0]!.click();
    await settle();
    expect(app.workspace.getActiveFile()?.path).toBe("memories/restic.md");
  });

  it("refreshes the open view instead of opening another", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/review", ok({ items: [], total: 0 }));
    const { app, host } = setup(daemon);
    registerViews(app, host);
    await showReviewQueue(host);
    await showReviewQueue(host);
    expect(app.workspace.getLeavesOfType(REVIEW_VIEW_TYPE)).toHaveLength(1);
    expect(daemon.routesCalled()).toEqual(["GET /v1/review?limit=50", "GET /v1/review?limit=50"]);
    const content = contentOf(app.workspace.getLeavesOfType(REVIEW_VIEW_TYPE)[0]);
    expect(content.find("vaultmem-empty")!.textContent).toBe("No memory is fading: nothing to review.");
    const view = app.workspace.getLeavesOfType(REVIEW_VIEW_TYPE)[0]!.view!;
    expect(view.actions.map((a) => a.title)).toEqual(["Refresh"]);
    view.actions[0]!.callback({});
    await settle();
    expect(daemon.requests).toHaveLength(3);
  });

  it("shows the daemon's error", async () => {
    const daemon = new FakeDaemon().on("GET", "/v1/review", errorResponse(500, "internal", "the index is gone"));
    const { app, host } = setup(daemon);
    registerViews(app, host);
    await showReviewQueue(host);
    const content = contentOf(app.workspace.getLeavesOfType(REVIEW_VIEW_TYPE)[0]);
    expect(content.find("vaultmem-error")!.textContent).toBe("the index is gone");
  });
});

describe("related notes view", () => {
  const related = (path: string) => ok({ path, related: [
    { path: "Areas/Homelab/Homelab Overview.md", title: "Homelab Overview", similarity: 0.651595 },
    { path: "Home.md", title: "Home", similarity: 0.4 },
  ] });

  it("shows the notes related to the open note and follows the open note", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/related", (body) => related((body as { id: string }).id));
    const { app, host, memoryFile, noteFile } = setup(daemon);
    registerViews(app, host);
    app.workspace.openFileForTest(memoryFile);
    await showRelatedNotes(host);

    expect(daemon.requests.map((r) => r.parsed)).toEqual([{ id: MEMORY_PATH, top_k: 10 }]);
    const content = contentOf(app.workspace.getLeavesOfType(RELATED_VIEW_TYPE)[0]);
    expect(content.find("vaultmem-item")).toBeDefined();
    expect(content.textContent).toContain("Related to 2026-09-21 nas-ups-battery-replaced");
    expect(content.findAll("vaultmem-item-meta").map((el) => el.textContent))
      .toEqual(["similarity 0.65", "similarity 0.40"]);

    app.workspace.openFileForTest(noteFile);
    await settle();
    expect(daemon.requests.map((r) => r.parsed))
      .toEqual([{ id: MEMORY_PATH, top_k: 10 }, { id: "Home.md", top_k: 10 }]);
    expect(content.textContent).toContain("Related to Home");

    content.findAll("vaultmem-item")[1]!.click();
    await settle();
    expect(app.workspace.getLeaf().opened.map((f) => f.path)).toContain("Home.md");
  });

  it("asks for a note when none is open, and stops listening once closed", async () => {
    const { app, host, daemon, noteFile } = setup(new FakeDaemon().on("POST", "/v1/related", related("Home.md")));
    registerViews(app, host);
    const before = app.workspace.listenerCount("file-open");
    await showRelatedNotes(host);
    const leaf = app.workspace.getLeavesOfType(RELATED_VIEW_TYPE)[0]!;
    expect(contentOf(leaf).textContent).toContain("Open a note to see related notes.");
    expect(app.workspace.listenerCount("file-open")).toBe(before + 1);
    leaf.detach();
    expect(app.workspace.listenerCount("file-open")).toBe(before);
    app.workspace.openFileForTest(noteFile);
    await settle();
    expect(daemon.requests).toEqual([]);
  });
});
