import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import VaultmemPlugin, { STATUS_POLL_MS } from "../src/main";
import type { Status } from "../src/types";
import { asApp, FakeDaemon, MEMORY_ID, memory, ok, TOKEN, vaultApp } from "./helpers";
import type { App, FakeElement, Plugin, PluginManifest } from "./obsidian-mock";

const MANIFEST: PluginManifest = {
  id: "vaultmem-bridge", name: "vaultmem", version: "0.1.0", minAppVersion: "1.5.7",
  description: "test", author: "vaultmem",
};

const STATUS: Status = { vault: "/v", notes: 3, memories: { total: 1 }, embedder: "fake",
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
    expect(app.commands.size).toBe(7);
    expect([...app.viewFactories.keys()]).toEqual(["vaultmem-review", "vaultmem-related"]);
    expect(app.settingTabs).toHaveLength(1);
    expect(app.ribbonIcons).toHaveLength(1);
    expect(app.statusBarItems).toHaveLength(1);
    expect(app.workspace.listenerCount("file-open")).toBe(1);
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
    expect(app.workspace.listenerCount()).toBe(0);
    expect(app.metadataCache.listenerCount()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    const requests = fake.requests.length;
    await vi.advanceTimersByTimeAsync(10 * STATUS_POLL_MS);
    expect(fake.requests).toHaveLength(requests);
  });

  it("saves settings and refreshes the status bar", async () => {
    const fake = daemon();
    const { app } = vaultApp();
    const plugin = await loadPlugin(app, null);
    plugin.settings.token = "changed";
    await plugin.saveSettings();
    await vi.advanceTimersByTimeAsync(0);
    expect((plugin as unknown as Plugin).data).toMatchObject({ token: "changed" });
    expect(fake.requests.at(-1)?.headers["Authorization"]).toBe("Bearer changed");
    unload(plugin);
  });

  it("re-reads the open note when its metadata changes", async () => {
    const fake = daemon();
    const { app, memoryFile, noteFile } = vaultApp();
    const plugin = await loadPlugin(app, { token: TOKEN });
    app.workspace.openFileForTest(memoryFile);
    await vi.advanceTimersByTimeAsync(0);
    const gets = () => fake.routesCalled().filter((route) => route.startsWith("GET /v1/memories/")).length;
    expect(gets()).toBe(1);
    app.metadataCache.trigger("changed", noteFile);
    app.metadataCache.trigger("changed", memoryFile);
    await vi.advanceTimersByTimeAsync(0);
    expect(gets()).toBe(2);
    unload(plugin);
  });
});
