import { afterEach, describe, expect, it, vi } from "vitest";
import {
  openSearch,
  pinCurrentMemory,
  promoteCurrentMemory,
  registerCommands,
  reinforceCurrentNote,
  restoreCurrentMemory,
  showRelatedNotes,
  showReviewQueue,
  unpinCurrentMemory,
} from "../src/commands";
import {
  indexStateText,
  MemorySearchModal,
  PROMPT_TEXT,
  resultMeta,
  SEARCH_DELAY_MS,
  supersededText,
} from "../src/search-modal";
import { RELATED_DELAY_MS, RELATED_VIEW_TYPE, REVIEW_VIEW_TYPE, RelatedView, ReviewView } from "../src/views";
import {
  errorResponse,
  FakeDaemon,
  MEMORY_ID,
  MEMORY_PATH,
  memory,
  ok,
  searchResult,
  deferred,
  settle,
  TestHost,
  vaultApp,
} from "./helpers";
import type { SearchResult } from "../src/types";
import {
  FakeElement,
  Modal,
  Notice,
  Plugin,
  Setting,
  type App,
  type ButtonComponent,
  type SuggestModal as MockSuggestModal,
  type WorkspaceLeaf,
} from "./obsidian-mock";

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

/** The confirmation dialog that is open now, and its buttons. */
function confirmation(): { title: string; text: string; buttons: ButtonComponent[] } {
  const modal = Modal.opened.at(-1) as unknown as { titleEl: FakeElement; contentEl: FakeElement; isOpen: boolean };
  if (!modal?.isOpen) {
    throw new Error("no dialog is open");
  }
  const setting = Setting.created.at(-1)!;
  return { title: modal.titleEl.textContent, text: modal.contentEl.textContent, buttons: setting.buttons };
}

describe("registered commands", () => {
  it("registers the eight commands, the memory ones only with a memory open", async () => {
    const { app, host, memoryFile, noteFile } = setup(new FakeDaemon().on("POST", "/v1/touch", ok(memory())));
    const plugin = new Plugin(app, { id: "vaultmem-bridge", name: "vaultmem", version: "0", minAppVersion: "0",
      description: "", author: "" });
    registerCommands(plugin as never, host);
    expect([...app.commands.keys()]).toEqual(["vaultmem-bridge:search", "vaultmem-bridge:reinforce-current-note",
      "vaultmem-bridge:promote-current-memory", "vaultmem-bridge:pin-current-memory",
      "vaultmem-bridge:unpin-current-memory", "vaultmem-bridge:restore-current-memory",
      "vaultmem-bridge:show-review-queue", "vaultmem-bridge:show-related-notes"]);
    const reinforce = app.commands.get("vaultmem-bridge:reinforce-current-note")!;
    expect(reinforce.checkCallback!(true)).toBe(false);
    app.workspace.openFileForTest(noteFile);
    expect(reinforce.checkCallback!(true)).toBe(false);
    app.workspace.openFileForTest(memoryFile);
    expect(reinforce.checkCallback!(true)).toBe(true);
    reinforce.checkCallback!(false);
    await settle();
    expect(Notice.messages).toEqual(['vaultmem: reinforced "NAS UPS battery replaced": score 0.60, 1 uses']);
    app.commands.get("vaultmem-bridge:search")!.callback!();
    expect(Modal.opened[0]).toBeInstanceOf(MemorySearchModal);
  });

  it("offers promote, pin, unpin and restore only where they apply", () => {
    const { app, host, noteFile } = setup();
    registerCommands(new Plugin(app, { id: "vaultmem-bridge", name: "vaultmem", version: "0", minAppVersion: "0",
      description: "", author: "" }) as never, host);
    const offered = (): string[] => ["reinforce-current-note", "promote-current-memory", "pin-current-memory",
      "unpin-current-memory", "restore-current-memory"]
      .filter((id) => app.commands.get(`vaultmem-bridge:${id}`)!.checkCallback!(true));
    expect(offered()).toEqual([]);
    app.workspace.openFileForTest(noteFile);
    expect(offered()).toEqual([]);
    const open = (path: string, frontmatter: Record<string, unknown>) => {
      app.workspace.openFileForTest(app.addNote(path, { stm_id: "m1", ...frontmatter }));
      return offered();
    };
    expect(open("memories/a.md", {})).toEqual(["reinforce-current-note", "promote-current-memory",
      "pin-current-memory"]);
    expect(open("memories/b.md", { stm_status: "active", stm_pinned: true })).toEqual(["reinforce-current-note",
      "promote-current-memory", "unpin-current-memory"]);
    expect(open("STM/c.md", { stm_status: "promoted" })).toEqual(["reinforce-current-note", "pin-current-memory"]);
    expect(open("memories/archive/d.md", { stm_status: "archived" })).toEqual(["restore-current-memory"]);
  });
});

describe("search memories", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const answering = () => new FakeDaemon().on("POST", "/v1/search", (body) => ok({
    query: (body as { query: string }).query,
    results: [searchResult(), searchResult({ id: null, path: "Home.md", title: "Home", score: null })],
  }));

  /** What Obsidian does per keystroke: ask for suggestions with the whole input so far. */
  function typeInto(modal: MemorySearchModal, text: string, msPerKey: number): Array<Promise<unknown>> {
    const answers: Array<Promise<unknown>> = [];
    for (let i = 1; i <= text.length; i++) {
      answers.push(modal.getSuggestions(text.slice(0, i)));
      vi.advanceTimersByTime(msPerKey);
    }
    return answers;
  }

  it("searches once the typing pauses, sending only real matches, and opens the chosen note", async () => {
    vi.useFakeTimers();
    const daemon = answering();
    const { app, host } = setup(daemon);
    const modal = openSearch(host);
    expect(Modal.opened).toEqual([modal]);
    expect(modal.emptyStateText).toBe(PROMPT_TEXT);
    expect(await modal.getSuggestions("  ")).toEqual([]);
    expect(modal.emptyStateText).toBe("Type to search your memories and notes.");
    expect(daemon.requests).toEqual([]);

    const pending = modal.getSuggestions(" ups battery ");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS - 1);
    expect(daemon.requests).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    const results = await pending;
    expect(daemon.requests.map((r) => r.parsed)).toEqual([{ query: "ups battery", top_k: 20, matched_only: true }]);
    expect(results.map((r) => r.title)).toEqual(["NAS UPS battery replaced", "Home"]);

    const el = new FakeElement();
    modal.renderSuggestion(results[0]!, el as unknown as HTMLElement);
    expect(el.find("vaultmem-item-title")!.textContent).toBe("NAS UPS battery replaced");
    expect(el.find("vaultmem-item-meta")!.textContent)
      .toBe(`memory, score 0.60 · relevance 0.50 · ${MEMORY_PATH}`);
    expect(el.find("vaultmem-snippet")!.textContent).toContain("APC Back-UPS");

    modal.onChooseSuggestion(results[1]!, { type: "keydown", key: "Enter" } as unknown as KeyboardEvent);
    await vi.advanceTimersByTimeAsync(0);
    expect(app.workspace.getActiveFile()?.path).toBe("Home.md");
    expect(app.workspace.newLeaves).toHaveLength(0);
  });

  it("says the index state an answer carries until the index is complete", async () => {
    vi.useFakeTimers();
    let indexing: Record<string, unknown> = { state: "starting", by_words: "partial", by_meaning: "partial" };
    const daemon = new FakeDaemon().on("POST", "/v1/search", (body) => ok({
      query: (body as { query: string }).query, results: [], indexing,
    }));
    const { host } = setup(daemon);
    const modal = openSearch(host);
    const ask = async (text: string) => {
      const pending = modal.getSuggestions(text);
      await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
      return pending;
    };
    const shown = () => (modal as unknown as MockSuggestModal<SearchResult>).instructions;
    await ask("ups");
    expect(shown()[0]).toEqual({ command: "index", purpose: indexStateText(indexing as never) });
    expect(modal.emptyStateText).toContain("vaultmem is starting");
    indexing = { state: "indexing", by_words: "complete", by_meaning: "partial", done: 120, total: 10000 };
    await ask("ups battery");
    expect(shown()[0]!.purpose)
      .toBe("Indexing 120 of 10,000 notes: every note is searchable by its words, by meaning partly");
    indexing = { state: "ready", by_words: "complete", by_meaning: "complete" };
    await ask("ups battery x");
    expect(shown()[0]!.command).toBe("↑↓");
    expect(modal.emptyStateText).toBe('Nothing relevant found for "ups battery x". (Only real matches are shown: see the vaultmem settings.)');
  });

  it("reads an older daemon's indexing answer (done and total only) as partial", () => {
    expect(indexStateText({ done: 3, total: 9 })).toBe("Indexing 3 of 9 notes: results are partial");
    expect(indexStateText(undefined)).toBeNull();
  });

  it("typing a 16-character query sends at most 2 searches, and every keystroke gets the last answer", async () => {
    vi.useFakeTimers();
    const daemon = answering();
    const { host } = setup(daemon);
    const modal = openSearch(host);
    // Steady typing (120 ms a key): one search, for the whole query.
    const answers = typeInto(modal, "battery replaced", 120);
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(daemon.requests.map((r) => (r.parsed as { query: string }).query)).toEqual(["battery replaced"]);
    const all = await Promise.all(answers);
    expect(all.every((answer) => (answer as unknown[]).length === 2)).toBe(true);

    // A pause mid-word (300 ms after "battery"): two searches at most.
    daemon.requests.length = 0;
    typeInto(modal, "battery", 100);
    await vi.advanceTimersByTimeAsync(300);
    const rest = " replaced";
    for (let i = 1; i <= rest.length; i++) {
      void modal.getSuggestions(`battery${rest.slice(0, i)}`);
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(daemon.requests.map((r) => (r.parsed as { query: string }).query)).toEqual(["battery", "battery replaced"]);
  });

  it("a slow earlier answer never replaces the newer one", async () => {
    vi.useFakeTimers();
    let release: () => void = () => undefined;
    const daemon = new FakeDaemon().on("POST", "/v1/search", async (body) => {
      const query = (body as { query: string }).query;
      if (query === "ups") {
        await new Promise<void>((resume) => (release = resume));
      }
      return ok({ query, results: [searchResult({ title: query })] });
    });
    const { host } = setup(daemon);
    const modal = openSearch(host);
    const first = modal.getSuggestions("ups");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    const second = modal.getSuggestions("ups battery");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect((await first).map((r) => r.title)).toEqual(["ups battery"]);
    expect((await second).map((r) => r.title)).toEqual(["ups battery"]);
  });

  it("says plainly when nothing relevant was found, and sends matched_only per the setting", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon().on("POST", "/v1/search", (body) =>
      ok({ query: (body as { query: string }).query, results: [] }));
    const { host } = setup(daemon);
    const modal = openSearch(host);
    const none = modal.getSuggestions("zebra migration");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(await none).toEqual([]);
    expect(modal.emptyStateText).toBe('Nothing relevant found for "zebra migration". '
      + "(Only real matches are shown: see the vaultmem settings.)");

    host.settings.matchedOnly = false;
    const all = modal.getSuggestions("zebra");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    await all;
    expect(daemon.requests.at(-1)!.parsed).toEqual({ query: "zebra", top_k: 20, matched_only: false });
    expect(modal.emptyStateText).toBe('No notes found for "zebra".');
  });

  it("shows a superseded memory's successor with a link that opens it", async () => {
    const { app, host } = setup(answering());
    const modal = openSearch(host);
    const stale = searchResult({ superseded_by: { id: "new-id", path: "Home.md", title: "Home", uri: "obsidian://x" } });
    const el = new FakeElement();
    modal.renderSuggestion(stale, el as unknown as HTMLElement);
    expect(supersededText(stale)).toBe("Superseded by Home");
    const link = el.find("vaultmem-successor-link")!;
    expect(link.textContent).toBe("Superseded by Home");
    let prevented = false;
    link.dispatch("click", { type: "click", button: 0, preventDefault: () => { prevented = true; },
      stopPropagation: () => undefined });
    await settle();
    expect(prevented).toBe(true);
    expect(app.workspace.getActiveFile()?.path).toBe("Home.md");

    const current = new FakeElement();
    modal.renderSuggestion(searchResult(), current as unknown as HTMLElement);
    expect(current.find("vaultmem-superseded")).toBeUndefined();
    expect(supersededText(searchResult({ superseded_by: null }))).toBeNull();
    const gone = new FakeElement();
    modal.renderSuggestion(searchResult({ superseded_by: { id: "x1", path: null, title: null, uri: null } }),
      gone as unknown as HTMLElement);
    expect(gone.find("vaultmem-superseded")!.textContent).toBe("Superseded by x1 (no longer in the vault)");
  });

  it("labels regular notes, review items and weak matches", () => {
    expect(resultMeta(searchResult({ id: null, score: null, path: "Home.md", relevance: 0.333 })))
      .toBe("note · relevance 0.33 · Home.md");
    expect(resultMeta(searchResult({ review: true })))
      .toBe(`memory, score 0.60 · relevance 0.50 · due for review · ${MEMORY_PATH}`);
    expect(resultMeta(searchResult({ matched: false, relevance: 0.12 })))
      .toBe(`memory, score 0.60 · relevance 0.12 (weak match) · ${MEMORY_PATH}`);
  });

  it("shows the error as the empty-state text", async () => {
    vi.useFakeTimers();
    const daemon = new FakeDaemon();
    daemon.reachable = false;
    const { host } = setup(daemon);
    const modal = openSearch(host);
    const answer = modal.getSuggestions("ups");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(await answer).toEqual([]);
    expect(modal.emptyStateText).toMatch(/^no daemon answers at http:\/\/127\.0\.0\.1:7345; start it with/);
  });

  it("has keyboard instructions, and Mod+Enter or Mod-click opens the note in a new tab", async () => {
    const { app, host } = setup();
    const modal = openSearch(host);
    const mock = modal as unknown as MockSuggestModal<SearchResult>;
    expect(mock.instructions.map((i) => i.command)).toEqual(["↑↓", "↵", "mod ↵", "esc"]);
    mock.activeSuggestion = searchResult({ path: "Home.md" });
    expect(mock.scope.press(["Mod"], "Enter", { type: "keydown", key: "Enter", ctrlKey: true })).toBe(false);
    await settle();
    expect(app.workspace.newLeaves.map((leaf) => leaf.opened.map((f) => f.path))).toEqual([["Home.md"]]);
    modal.onChooseSuggestion(searchResult(), { type: "click", ctrlKey: true } as unknown as MouseEvent);
    await settle();
    expect(app.workspace.newLeaves.map((leaf) => leaf.opened.map((f) => f.path))).toEqual([["Home.md"], [MEMORY_PATH]]);
  });

  it("stops waiting when closed: pending callers get an empty list, nothing is sent", async () => {
    vi.useFakeTimers();
    const daemon = answering();
    const { host } = setup(daemon);
    const modal = openSearch(host);
    const pending = modal.getSuggestions("ups");
    modal.close();
    expect(await pending).toEqual([]);
    await vi.advanceTimersByTimeAsync(10 * SEARCH_DELAY_MS);
    expect(daemon.requests).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("says when a chosen note is not in this vault", async () => {
    const { host } = setup();
    openSearch(host).onChooseSuggestion(searchResult({ path: "elsewhere/Other.md" }),
      { type: "click" } as unknown as MouseEvent);
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
      "vaultmem: no daemon answers at http://127.0.0.1:7345; start it with `vaultmem run --vault <your vault>` "
        + "(or install it as a service: `vaultmem service install --vault <your vault>`)"]);
  });
});

describe("promote current memory", () => {
  const to = "STM/2026-09-21 nas-ups-battery-replaced.md";
  const promoted = () => new FakeDaemon().on("POST", "/v1/promote", ok({ dry_run: false,
    promote: [{ id: MEMORY_ID, path: MEMORY_PATH, decision: "promote", reason: "promoted on request", score: 0 }],
    promoted: [{ id: MEMORY_ID, from: MEMORY_PATH, to, reason: "promoted on request" }] }));

  it("asks first, shows that it is working, then says where the memory went", async () => {
    const answer = deferred<ReturnType<typeof ok>>();
    const daemon = new FakeDaemon().on("POST", "/v1/promote", () => answer.promise);
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    const done = promoteCurrentMemory(host);
    const dialog = confirmation();
    expect(dialog.title).toBe("Promote this memory?");
    expect(dialog.text).toContain('"2026-09-21 nas-ups-battery-replaced" moves to the promoted folder');
    expect(dialog.buttons.map((b) => [b.text, b.cta])).toEqual([["Cancel", false], ["Promote", true]]);
    expect(daemon.requests).toEqual([]);
    await dialog.buttons[1]!.press();
    await settle();
    expect(daemon.requests.map((r) => [r.route, r.parsed]))
      .toEqual([["POST /v1/promote", { id: MEMORY_ID, dry_run: false }]]);
    expect(Notice.shown.map((n) => [n.message, n.duration, n.hidden]))
      .toEqual([['vaultmem: promoting "2026-09-21 nas-ups-battery-replaced"…', 0, false]]);
    answer.resolve(await promoted().request({ url: "http://127.0.0.1:7345/v1/promote", method: "POST",
      headers: {}, body: "{}" }));
    await done;
    expect(Notice.shown.map((n) => [n.message, n.hidden])).toEqual([
      ['vaultmem: promoting "2026-09-21 nas-ups-battery-replaced"…', true],
      [`vaultmem: promoted "2026-09-21 nas-ups-battery-replaced" to ${to}`, false]]);
    expect(host.refreshes).toBe(1);
  });

  it("does nothing when the user cancels or closes the dialog", async () => {
    const daemon = promoted();
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    const cancelled = promoteCurrentMemory(host);
    await confirmation().buttons[0]!.press();
    await cancelled;
    const closed = promoteCurrentMemory(host);
    (Modal.opened.at(-1) as Modal).close();
    await closed;
    expect(daemon.requests).toEqual([]);
    expect(Notice.messages).toEqual([]);
    expect(host.refreshes).toBe(0);
  });

  it("reports the daemon's refusal and refuses regular notes itself", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/promote",
      errorResponse(400, "invalid_input", `${MEMORY_PATH} is promoted, not active`));
    const { app, host, memoryFile, noteFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    const refused = promoteCurrentMemory(host);
    await confirmation().buttons[1]!.press();
    await refused;
    app.workspace.openFileForTest(noteFile);
    await promoteCurrentMemory(host);
    expect(Notice.shown.map((n) => n.message)).toEqual([
      'vaultmem: promoting "2026-09-21 nas-ups-battery-replaced"…',
      `vaultmem: ${MEMORY_PATH} is promoted, not active`, 'vaultmem: "Home" is not a memory']);
    expect(Notice.shown[0]!.hidden).toBe(true);
    expect(daemon.requests).toHaveLength(1);
  });
});

describe("restore current memory", () => {
  it("restores the open archived memory by its stm_id and says where it went", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/restore", ok({
      restored: { id: MEMORY_ID, from: `memories/archive/${MEMORY_PATH.split("/")[1]}`, to: MEMORY_PATH },
      memory: memory({ status: "active" }),
    }));
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await restoreCurrentMemory(host);
    expect(daemon.requests.map((r) => [r.route, r.parsed])).toEqual([["POST /v1/restore", { id: MEMORY_ID }]]);
    expect(Notice.messages).toEqual([`vaultmem: restored "NAS UPS battery replaced" to ${MEMORY_PATH}`]);
    expect(host.refreshes).toBe(1);
  });

  it("shows the daemon's reason when the memory is not archived", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/restore",
      errorResponse(400, "invalid_input", `${MEMORY_PATH} is active, not archived: there is nothing to restore`));
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await restoreCurrentMemory(host);
    expect(Notice.messages).toEqual([
      `vaultmem: ${MEMORY_PATH} is active, not archived: there is nothing to restore`]);
    expect(host.refreshes).toBe(0);
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
    expect(Notice.messages).toEqual(['vaultmem: pinned "NAS UPS battery replaced": it will not be forgotten']);
    expect(host.refreshes).toBe(1);
  });

  it("unpins the open memory by its stm_id", async () => {
    const daemon = new FakeDaemon().on("POST", "/v1/pin", pinRoute);
    const { app, host, memoryFile } = setup(daemon);
    app.workspace.openFileForTest(memoryFile);
    await unpinCurrentMemory(host);
    expect(daemon.requests.map((r) => [r.route, r.parsed]))
      .toEqual([["POST /v1/pin", { id: MEMORY_ID, pinned: false }]]);
    expect(Notice.messages).toEqual(['vaultmem: unpinned "NAS UPS battery replaced"']);
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
    expect(unpin.checkCallback!(true)).toBe(false);
    pin.checkCallback!(false);
    await settle();
    // Obsidian updates the note's frontmatter when the daemon writes stm_pinned.
    app.metadataCache.caches.get(MEMORY_PATH)!.frontmatter!["stm_pinned"] = true;
    expect(pin.checkCallback!(true)).toBe(false);
    expect(unpin.checkCallback!(true)).toBe(true);
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
      expect.stringMatching(/^vaultmem: no daemon answers at http:\/\/127\.0\.0\.1:7345; start it with/)]);
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
    expect(leaves[0]!.view!.getDisplayText()).toBe("Memory review");
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

  it("lists proposed updates; a click opens the newer memory", async () => {
    const update = { id: "old1", path: "memories/port-5000.md", title: "NAS on port 5000", uri: "obsidian://a",
      reason: "a value changed: 5000 → 5001",
      by: { id: "new1", path: "memories/port-5001.md", title: "NAS moved to port 5001", uri: "obsidian://b" } };
    const daemon = new FakeDaemon().on("GET", "/v1/review", ok({ items: [], total: 0, updates: [update] }));
    const { app, host } = setup(daemon);
    app.addNote("memories/port-5001.md", { stm_id: "new1" });
    registerViews(app, host);
    await showReviewQueue(host);
    const content = contentOf(app.workspace.getLeavesOfType(REVIEW_VIEW_TYPE)[0]);
    expect(content.findAll("vaultmem-heading").map((h) => h.textContent)).toEqual(["Memories to review", "Possible updates"]);
    const [item] = content.findAll("vaultmem-item");
    expect(item!.find("vaultmem-item-title")!.textContent).toBe("NAS moved to port 5001 may replace NAS on port 5000");
    expect(item!.find("vaultmem-item-meta")!.textContent).toBe("possible update: a value changed: 5000 → 5001");
    item!.click();
    await settle();
    expect(app.workspace.getActiveFile()?.path).toBe("memories/port-5001.md");
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

describe("review and related entries: keyboard, new tab, preview", () => {
  const fading = [
    memory({ id: "a", path: "memories/a.md", title: "A", review_priority: 0.9 }),
    memory({ id: "b", path: "memories/b.md", title: "B", review_priority: 0.8 }),
  ];

  async function reviewItems() {
    const daemon = new FakeDaemon().on("GET", "/v1/review", ok({ items: fading, total: 2 }));
    const { app, host } = setup(daemon);
    app.addNote("memories/a.md", { stm_id: "a" });
    app.addNote("memories/b.md", { stm_id: "b" });
    registerViews(app, host);
    await showReviewQueue(host);
    const leaf = app.workspace.getLeavesOfType(REVIEW_VIEW_TYPE)[0]!;
    return { app, leaf, items: contentOf(leaf).findAll("vaultmem-item") };
  }

  it("are focusable; Enter opens, arrows move, Mod+Enter opens a new tab", async () => {
    const { app, items } = await reviewItems();
    expect(items.map((item) => [item.getAttr("tabindex"), item.getAttr("role"), item.getAttr("aria-label")]))
      .toEqual([["0", "listitem", "A"], ["0", "listitem", "B"]]);
    expect(items[0]!.press("ArrowDown").defaultPrevented).toBe(true);
    expect(FakeElement.focused).toBe(items[1]);
    items[1]!.press("ArrowUp");
    expect(FakeElement.focused).toBe(items[0]);
    expect(items[0]!.press("Enter").defaultPrevented).toBe(true);
    await settle();
    expect(app.workspace.getActiveFile()?.path).toBe("memories/a.md");
    expect(items[0]!.press("x").defaultPrevented).toBe(false);
    items[1]!.press("Enter", { ctrlKey: true });
    await settle();
    expect(app.workspace.newLeaves.map((leaf) => leaf.opened.map((f) => f.path))).toEqual([["memories/b.md"]]);
  });

  it("Mod-click and middle-click open a new tab; hovering asks for Obsidian's page preview", async () => {
    const { app, leaf, items } = await reviewItems();
    items[0]!.click({ metaKey: true });
    items[1]!.dispatch("auxclick", { type: "auxclick", button: 1 });
    await settle();
    expect(app.workspace.newLeaves.map((l) => l.opened.map((f) => f.path))).toEqual([["memories/a.md"], ["memories/b.md"]]);
    const hovers: unknown[] = [];
    app.workspace.on("hover-link", (info: unknown) => hovers.push(info));
    const event = { type: "mouseover" };
    items[1]!.dispatch("mouseover", event);
    expect(hovers).toEqual([{ event, source: REVIEW_VIEW_TYPE, hoverParent: leaf, targetEl: items[1],
      linktext: "memories/b.md", sourcePath: "" }]);
  });
});

describe("related notes view", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const related = (path: string) => ok({ path, related: [
    { path: "Areas/Homelab/Homelab Overview.md", title: "Homelab Overview", similarity: 0.651595 },
    { path: "Home.md", title: "Home", similarity: 0.4 },
  ] });
  const relatedDaemon = () =>
    new FakeDaemon().on("POST", "/v1/related", (body) => related((body as { id: string }).id));

  it("shows the notes related to the open note and follows the open note", async () => {
    vi.useFakeTimers();
    const daemon = relatedDaemon();
    const { app, host, memoryFile, noteFile } = setup(daemon);
    registerViews(app, host);
    app.workspace.openFileForTest(memoryFile);
    await showRelatedNotes(host);

    expect(daemon.requests.map((r) => r.parsed)).toEqual([{ id: MEMORY_PATH, top_k: 10 }]);
    const leaf = app.workspace.getLeavesOfType(RELATED_VIEW_TYPE)[0]!;
    expect(leaf.view!.getDisplayText()).toBe("Related notes");
    const content = contentOf(leaf);
    expect(content.find("vaultmem-item")).toBeDefined();
    expect(content.textContent).toContain("Related to 2026-09-21 nas-ups-battery-replaced");
    expect(content.findAll("vaultmem-item-meta").map((el) => el.textContent))
      .toEqual(["similarity 0.65", "similarity 0.40"]);

    // Another note: the old list goes at once; the daemon is asked once the opening pauses.
    app.workspace.openFileForTest(noteFile);
    expect(content.textContent).toBe("Related to HomeLoading…");
    expect(content.find("vaultmem-item")).toBeUndefined();
    await vi.advanceTimersByTimeAsync(RELATED_DELAY_MS);
    expect(daemon.requests.map((r) => r.parsed))
      .toEqual([{ id: MEMORY_PATH, top_k: 10 }, { id: "Home.md", top_k: 10 }]);
    expect(content.textContent).toContain("Related to Home");

    content.findAll("vaultmem-item")[1]!.click();
    await vi.advanceTimersByTimeAsync(0);
    expect(app.workspace.getLeaf().opened.map((f) => f.path)).toContain("Home.md");
  });

  it("flipping through notes asks about the last one only", async () => {
    vi.useFakeTimers();
    const daemon = relatedDaemon();
    const { app, host, memoryFile, noteFile } = setup(daemon);
    registerViews(app, host);
    await showRelatedNotes(host);
    for (let i = 0; i < 5; i++) {
      app.workspace.openFileForTest(i % 2 === 0 ? memoryFile : noteFile);
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(RELATED_DELAY_MS);
    expect(daemon.requests.map((r) => r.parsed)).toEqual([{ id: MEMORY_PATH, top_k: 10 }]);
  });

  it("asks nothing while hidden, and catches up when shown", async () => {
    vi.useFakeTimers();
    const daemon = relatedDaemon();
    const { app, host, memoryFile, noteFile } = setup(daemon);
    registerViews(app, host);
    app.workspace.openFileForTest(memoryFile);
    await showRelatedNotes(host);
    const view = app.workspace.getLeavesOfType(RELATED_VIEW_TYPE)[0]!.view!;
    const leafOf = (v: typeof view) => v.leaf;
    view.containerEl.shown = false;
    app.workspace.openFileForTest(noteFile);
    app.workspace.openFileForTest(memoryFile);
    app.workspace.openFileForTest(noteFile);
    await vi.advanceTimersByTimeAsync(10 * RELATED_DELAY_MS);
    expect(daemon.requests).toHaveLength(1);
    view.containerEl.shown = true;
    app.workspace.trigger("active-leaf-change", leafOf(view));
    await vi.advanceTimersByTimeAsync(RELATED_DELAY_MS);
    expect(daemon.requests.map((r) => r.parsed)).toEqual([{ id: MEMORY_PATH, top_k: 10 }, { id: "Home.md", top_k: 10 }]);
    app.workspace.trigger("layout-change");
    await vi.advanceTimersByTimeAsync(RELATED_DELAY_MS);
    expect(daemon.requests).toHaveLength(2);
  });

  it("asks for a note when none is open, and stops listening once closed", async () => {
    vi.useFakeTimers();
    const { app, host, daemon, noteFile } = setup(new FakeDaemon().on("POST", "/v1/related", related("Home.md")));
    registerViews(app, host);
    const before = app.workspace.listenerCount("file-open");
    await showRelatedNotes(host);
    const leaf = app.workspace.getLeavesOfType(RELATED_VIEW_TYPE)[0]!;
    expect(contentOf(leaf).textContent).toContain("Open a note to see related notes.");
    expect(app.workspace.listenerCount("file-open")).toBe(before + 1);
    leaf.detach();
    expect(app.workspace.listenerCount("file-open")).toBe(before);
    expect(app.workspace.listenerCount("layout-change")).toBe(0);
    expect(app.workspace.listenerCount("active-leaf-change")).toBe(0);
    app.workspace.openFileForTest(noteFile);
    await vi.advanceTimersByTimeAsync(10 * RELATED_DELAY_MS);
    expect(daemon.requests).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
