import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REQUEST_TIMEOUT_MS } from "../src/client";
import VaultmemPlugin, { NOTE_REFRESH_DELAY_MS, STATUS_POLL_MS } from "../src/main";
import type { Status } from "../src/types";
import { asApp, FakeDaemon, MEMORY_ID, memory, ok, TOKEN, VAULT_PATH, vaultApp } from "./helpers";
import { Notice, type App, type FakeElement, type Plugin, type PluginManifest } from "./obsidian-mock";

const MANIFEST: PluginManifest = {
  id: "vaultmem-bridge", name: "vaultmem", version: "0.1.0", minAppVersion: "1.7.2",
  description: "test", author: "the vaultmem authors",
};

const STATUS: Status = { vault: VAULT_PATH, notes: 3, memories: { total: 1 }, embedder: "fake",
  daemon: { pid: 1, version: "0.1.0", url: null, started: "", indexing: { running: false, done: 3, total: 3,
    error: null } } };

function daemon(): FakeDaemon {
  const fake = new FakeDaemon()
    .on("GET", "/v1/status", ok(STATUS))
    .on("GET", `/v1/memories/${MEMORY_ID}`, ok(memory()))
    .on("POST", "/v1/observe", ok({ observed: [{ ...memory(), cross_domain: false }] }));
  fake.installAsRequestUrl();
  return fake;
}

async function loadPlugin(app: App, data: unknown): Promise<VaultmemPlugin> {
  const plugin = new VaultmemPlugin(asApp(app), MANIFEST);
  (plugin as unknown as Plugin).data = data;
  (plugin as unknown as Plugin).load();
  await vi.advanceTimersByTimeAsync(0);
  return plugin;
}

function unload(plugin: VaultmemPlugin): void {
  (plugin as unknown as Plugin).unload();
}

describe("plugin lifecycle", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("registers commands, views, a settings tab, a ribbon icon and a status bar item", async () => {
    const fake = daemon();
    const { app } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    expect(plugin.settings.token).toBe(TOKEN);
    expect(app.commands.size).toBe(8);
    expect([...app.viewFactories.keys()]).toEqual(["vaultmem-review", "vaultmem-related"]);
    expect(app.settingTabs).toHaveLength(1);
    expect(app.ribbonIcons).toHaveLength(1);
    expect(app.statusBarItems).toHaveLength(1);
    expect([...app.hoverSources.keys()]).toEqual(["vaultmem-review", "vaultmem-related"]);
    expect(app.workspace.listenerCount("file-open")).toBe(2); // the status bar and auto-reinforce
    expect(app.metadataCache.listenerCount("changed")).toBe(1);
    expect(fake.requests).toEqual([]);
    unload(plugin);
  });

  it("fills the status bar once the layout is ready, on file-open, and every poll", async () => {
    const fake = daemon();
    const { app, memoryFile } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    const bar = app.statusBarItems[0] as FakeElement;
    app.workspace.setLayoutReady();
    await vi.advanceTimersByTimeAsync(0);
    expect(bar.textContent).toBe("vaultmem: connected");

    app.workspace.openFileForTest(memoryFile);
    await vi.advanceTimersByTimeAsync(0);
    expect(bar.textContent).toBe("memory: active, score 0.60 · vaultmem: connected");
    expect(fake.requests.every((r) => r.headers["Authorization"] === `Bearer ${TOKEN}`)).toBe(true);

    const before = fake.routesCalled().filter((route) => route === "GET /v1/status").length;
    await vi.advanceTimersByTimeAsync(STATUS_POLL_MS);
    expect(fake.routesCalled().filter((route) => route === "GET /v1/status")).toHaveLength(before + 1);

    fake.reachable = false;
    await vi.advanceTimersByTimeAsync(STATUS_POLL_MS);
    expect(bar.textContent).toBe("memory: active, score 0.60 · vaultmem: unreachable");
    unload(plugin);
  });

  it("auto-reinforces a memory kept open, when turned on", async () => {
    const fake = daemon();
    const { app, memoryFile } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN, autoReinforce: true, autoReinforceSeconds: 5 });
    app.workspace.openFileForTest(memoryFile);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(fake.routesCalled()).not.toContain("POST /v1/observe");
    await vi.advanceTimersByTimeAsync(1);
    const observe = fake.requests.filter((r) => r.route === "POST /v1/observe");
    expect(observe.map((r) => r.parsed)).toEqual([{ ids: [MEMORY_ID], context_tags: ["homelab", "power", "ups"] }]);
    unload(plugin);
  });

  it("unloading removes everything it registered, pending timers included", async () => {
    const fake = daemon();
    const { app, memoryFile } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN, autoReinforce: true, autoReinforceSeconds: 5 });
    app.workspace.openFileForTest(memoryFile);
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(2); // the status poll and the auto-reinforce countdown
    unload(plugin);

    expect(app.commands.size).toBe(0);
    expect(app.viewFactories.size).toBe(0);
    expect(app.settingTabs).toHaveLength(0);
    expect(app.ribbonIcons).toHaveLength(0);
    expect(app.statusBarItems).toHaveLength(0);
    expect(app.hoverSources.size).toBe(0);
    expect(app.workspace.listenerCount()).toBe(0);
    expect(app.metadataCache.listenerCount()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    const requests = fake.requests.length;
    await vi.advanceTimersByTimeAsync(10 * STATUS_POLL_MS);
    expect(fake.requests).toHaveLength(requests);
  });

  it("saves settings, and asks the daemon again only when the address or token changed", async () => {
    const fake = daemon();
    const { app } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    plugin.settings.autoReinforce = true;
    await plugin.saveSettings();
    await vi.advanceTimersByTimeAsync(0);
    expect((plugin as unknown as Plugin).data).toMatchObject({ autoReinforce: true });
    expect(fake.requests).toEqual([]);
    plugin.settings.token = "changed";
    await plugin.saveSettings();
    await vi.advanceTimersByTimeAsync(0);
    expect((plugin as unknown as Plugin).data).toMatchObject({ token: "changed" });
    expect(fake.routesCalled()).toEqual(["GET /v1/status"]);
    expect(fake.requests.at(-1)?.headers["Authorization"]).toBe("Bearer changed");
    unload(plugin);
  });

  it("re-reads the open memory once its stm_* keys change, after edits pause", async () => {
    const fake = daemon();
    const { app, memoryFile, noteFile } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    app.workspace.openFileForTest(memoryFile);
    await vi.advanceTimersByTimeAsync(0);
    const gets = () => fake.routesCalled().filter((route) => route.startsWith("GET /v1/memories/")).length;
    expect(gets()).toBe(1);
    // Typing in the body: metadata changes, the memory's state does not.
    for (let i = 0; i < 20; i++) {
      app.metadataCache.trigger("changed", memoryFile);
      await vi.advanceTimersByTimeAsync(200);
    }
    app.metadataCache.trigger("changed", noteFile);
    await vi.advanceTimersByTimeAsync(2 * NOTE_REFRESH_DELAY_MS);
    expect(gets()).toBe(1);
    // The daemon writes the memory's stm_* keys (a burst of changes): one re-read after the pause.
    const front = app.metadataCache.caches.get(memoryFile.path)!.frontmatter!;
    front["stm_use_count"] = 2;
    app.metadataCache.trigger("changed", memoryFile);
    front["stm_last_used"] = "2026-11-24T10:00:00+00:00";
    app.metadataCache.trigger("changed", memoryFile);
    await vi.advanceTimersByTimeAsync(NOTE_REFRESH_DELAY_MS - 1);
    expect(gets()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(gets()).toBe(2);
    app.metadataCache.trigger("changed", memoryFile);
    await vi.advanceTimersByTimeAsync(2 * NOTE_REFRESH_DELAY_MS);
    expect(gets()).toBe(2);
    unload(plugin);
  });

  it("first run without a token: asks for it, sends nothing, and the status bar opens the settings", async () => {
    const fake = daemon();
    const { app, memoryFile } = vaultApp();
    const opened: string[] = [];
    (app as unknown as { setting: object }).setting = {
      open: () => opened.push("open"),
      openTabById: (id: string) => opened.push(id),
    };
    const plugin = await loadPlugin(app, null);
    app.workspace.setLayoutReady();
    app.workspace.openFileForTest(memoryFile);
    await vi.advanceTimersByTimeAsync(10 * STATUS_POLL_MS);
    const bar = app.statusBarItems[0] as FakeElement;
    expect(bar.textContent).toBe("vaultmem: token needed");
    expect(bar.getAttr("aria-label")).toContain("`vaultmem token --vault <your vault>` prints it");
    expect(Notice.messages).toEqual(["vaultmem: paste the daemon's token in the vaultmem plugin settings "
      + '(`vaultmem token --vault "/home/sam/vault"` prints it); click vaultmem in the status bar to open them']);
    expect(fake.requests).toEqual([]);
    expect(bar.hasClass("mod-clickable")).toBe(true);
    bar.click();
    expect(opened).toEqual(["open", "vaultmem-bridge"]);

    plugin.settings.token = TOKEN;
    await plugin.saveSettings();
    await vi.advanceTimersByTimeAsync(0);
    expect(bar.textContent).toBe("memory: active, score 0.60 · vaultmem: connected");
    expect(fake.requests.every((r) => r.headers["Authorization"] === `Bearer ${TOKEN}`)).toBe(true);
    unload(plugin);
  });

  it("the status bar says where the settings are when Obsidian cannot be asked to open them", async () => {
    daemon();
    const { app } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    (app.statusBarItems[0] as FakeElement).click();
    expect(Notice.messages).toEqual(["vaultmem: open Settings → Community plugins → vaultmem to set the daemon's "
      + "address and token"]);
    unload(plugin);
  });

  it("a hung daemon: 'not responding' within the timeout, and polls never pile up", async () => {
    const fake = daemon();
    fake.hung = true;
    const { app } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    const bar = app.statusBarItems[0] as FakeElement;
    app.workspace.setLayoutReady();
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
    expect(bar.textContent).toBe("vaultmem: not responding");
    let most = 0;
    for (let second = 0; second < 600; second++) {
      await vi.advanceTimersByTimeAsync(1000);
      most = Math.max(most, fake.inFlight);
    }
    expect(most).toBe(1);
    expect(bar.textContent).toBe("vaultmem: not responding");
    expect(fake.routesCalled()).toEqual(["GET /v1/status"]);

    fake.unstick(); // the stuck request ends at last: the next poll asks again
    await vi.advanceTimersByTimeAsync(STATUS_POLL_MS);
    expect(bar.textContent).toBe("vaultmem: connected");
    expect(fake.inFlight).toBe(0);
    unload(plugin);
  });

  it("a daemon that stalls after connecting no longer shows 'connected'", async () => {
    const fake = daemon();
    const { app } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    const bar = app.statusBarItems[0] as FakeElement;
    app.workspace.setLayoutReady();
    await vi.advanceTimersByTimeAsync(0);
    expect(bar.textContent).toBe("vaultmem: connected");
    fake.hung = true;
    await vi.advanceTimersByTimeAsync(STATUS_POLL_MS + REQUEST_TIMEOUT_MS);
    expect(bar.textContent).toBe("vaultmem: not responding");
    // A new address is asked at once, even with the old daemon's request still open.
    plugin.settings.daemonUrl = "http://127.0.0.1:7346";
    fake.hung = false;
    await plugin.saveSettings();
    await vi.advanceTimersByTimeAsync(0);
    expect(bar.textContent).toBe("vaultmem: connected");
    expect(fake.requests.at(-1)?.url).toBe("http://127.0.0.1:7346/v1/status");
    fake.unstick();
    unload(plugin);
  });

  it("says so when the daemon serves another vault", async () => {
    const fake = daemon().on("GET", "/v1/status", ok({ ...STATUS, vault: "/home/sam/Work" }));
    const { app } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    app.workspace.setLayoutReady();
    await vi.advanceTimersByTimeAsync(0);
    const bar = app.statusBarItems[0] as FakeElement;
    expect(bar.textContent).toBe("vaultmem: serves another vault");
    expect(bar.getAttr("aria-label")).toContain("(/home/sam/Work), not this one (/home/sam/vault)");
    expect(fake.routesCalled()).toEqual(["GET /v1/status"]);
    unload(plugin);
  });
});
