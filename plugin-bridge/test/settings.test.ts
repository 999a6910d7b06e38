import { afterEach, describe, expect, it, vi } from "vitest";
import { REQUEST_TIMEOUT_MS } from "../src/client";
import VaultmemPlugin from "../src/main";
import {
  DEFAULT_SETTINGS,
  loadSettings,
  normalizeSettings,
  parseSeconds,
  SAVE_DELAY_MS,
  saveSettings,
  VaultmemSettingTab,
} from "../src/settings";
import { asApp, BASE_URL, errorResponse, FakeDaemon, ok, TOKEN } from "./helpers";
import { App, FakeElement, Plugin, Setting, type PluginManifest } from "./obsidian-mock";

const MANIFEST: PluginManifest = {
  id: "vaultmem-bridge", name: "vaultmem", version: "0.1.0", minAppVersion: "1.7.2",
  description: "test", author: "the vaultmem authors",
};

describe("settings values", () => {
  it("has the documented defaults", () => {
    expect(DEFAULT_SETTINGS).toEqual({
      daemonUrl: "http://127.0.0.1:7345", token: "", autoReinforce: false, autoReinforceSeconds: 30,
      matchedOnly: true });
  });

  it("uses the defaults for missing or malformed saved data", () => {
    expect(normalizeSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings("junk")).toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings({ daemonUrl: 7, token: null, autoReinforce: "yes", autoReinforceSeconds: -3,
      matchedOnly: "no" })).toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings({ daemonUrl: "   " }).daemonUrl).toBe(DEFAULT_SETTINGS.daemonUrl);
  });

  it("keeps valid saved values over the defaults", () => {
    expect(normalizeSettings({ daemonUrl: " http://localhost:9000 ", token: " abc\n", autoReinforce: true,
      autoReinforceSeconds: 45, matchedOnly: false, unknown: 1 }))
      .toEqual({ daemonUrl: "http://localhost:9000", token: "abc", autoReinforce: true, autoReinforceSeconds: 45,
        matchedOnly: false });
  });

  it("accepts whole seconds from 1 to 3600", () => {
    expect(parseSeconds("45")).toBe(45);
    expect(parseSeconds(1)).toBe(1);
    expect(parseSeconds(3600)).toBe(3600);
    for (const bad of [0, 3601, 1.5, "", "abc", "10s", null, undefined, true]) {
      expect(parseSeconds(bad), String(bad)).toBeNull();
    }
  });

  it("loads from and saves to the plugin's data", async () => {
    const plugin = new Plugin(new App(), MANIFEST);
    plugin.data = { token: "t1", autoReinforce: true };
    const settings = await loadSettings(plugin);
    expect(settings).toEqual({ ...DEFAULT_SETTINGS, token: "t1", autoReinforce: true });
    settings.autoReinforceSeconds = 12;
    await saveSettings(plugin, settings);
    expect(plugin.data).toEqual({ ...DEFAULT_SETTINGS, token: "t1", autoReinforce: true, autoReinforceSeconds: 12 });
    expect(plugin.data).not.toBe(settings);
  });
});

/** The settings tab of a plugin whose requestUrl reaches `daemon`. */
async function openTab(daemon: FakeDaemon, data: unknown = { token: TOKEN }) {
  daemon.installAsRequestUrl();
  const app = new App();
  const plugin = new VaultmemPlugin(asApp(app), MANIFEST);
  (plugin as unknown as Plugin).data = data;
  plugin.settings = await loadSettings(plugin);
  const tab = new VaultmemSettingTab(asApp(app), plugin);
  tab.display();
  const byName = (name: string): Setting => {
    const setting = Setting.created.find((s) => s.name === name);
    if (setting === undefined) {
      throw new Error(`no setting named ${name}`);
    }
    return setting;
  };
  return { plugin, tab, byName, saved: () => (plugin as unknown as Plugin).data };
}

const HEALTHY = () => new FakeDaemon()
  .on("GET", "/v1/health", ok({ status: "ok", version: "0.1.0", vault: "vault" }))
  .on("GET", "/v1/status", ok({ vault: "/home/sam/vault", notes: 3, memories: { total: 1 }, embedder: "fake" }));

const NAMES = ["Daemon address", "Token", "Test connection", "Only real matches", "Reinforce memories while reading",
  "Seconds before a read counts"];

describe("settings tab", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("shows every setting with its current value", async () => {
    const { byName } = await openTab(HEALTHY(), { token: TOKEN, autoReinforceSeconds: 20 });
    expect(Setting.created.map((s) => s.name)).toEqual(NAMES);
    expect(byName("Only real matches").toggles[0]!.getValue()).toBe(true);
    expect(byName("Daemon address").texts[0]!.getValue()).toBe(BASE_URL);
    expect(byName("Token").texts[0]!.getValue()).toBe(TOKEN);
    expect(byName("Token").texts[0]!.inputEl.type).toBe("password");
    expect(byName("Token").desc).toBe("The daemon's access token: run `vaultmem token --vault \"/home/sam/vault\"` "
      + "and paste what it prints.");
    expect(byName("Reinforce memories while reading").toggles[0]!.getValue()).toBe(false);
    expect(byName("Seconds before a read counts").texts[0]!.getValue()).toBe("20");
  });

  it("declares the same rows for Obsidian's settings search (1.13+)", async () => {
    const { tab } = await openTab(HEALTHY());
    const definitions = tab.getSettingDefinitions() as Array<{ name: string; desc: string; aliases: string[];
      render: (setting: Setting) => void }>;
    expect(definitions.map((d) => d.name)).toEqual(NAMES);
    expect(definitions.every((d) => d.desc.length > 0)).toBe(true);
    expect(definitions.find((d) => d.name === "Token")!.aliases).toContain("password");
    Setting.created.length = 0;
    const row = new Setting(new FakeElement());
    definitions.find((d) => d.name === "Only real matches")!.render(row);
    expect(row.name).toBe("Only real matches");
    expect(row.toggles[0]!.getValue()).toBe(true);
  });

  it("saves what the user types once the typing pauses, and toggles at once", async () => {
    vi.useFakeTimers();
    const fake = HEALTHY();
    const { byName, saved, plugin } = await openTab(fake);
    const savesBefore = (plugin as unknown as Plugin).savedData.length;
    const address = byName("Daemon address").texts[0]!;
    for (const text of ["http://l", "http://localhost", "http://localhost:8123 "]) {
      await address.type(text);
      await vi.advanceTimersByTimeAsync(100);
    }
    const token = byName("Token").texts[0]!;
    for (let i = 1; i <= 10; i++) {
      await token.type(" new-token ".slice(0, i));
      await vi.advanceTimersByTimeAsync(100);
    }
    expect((plugin as unknown as Plugin).savedData.length).toBe(savesBefore);
    expect(fake.requests).toEqual([]);
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect((plugin as unknown as Plugin).savedData.length).toBe(savesBefore + 1);
    expect(fake.requests).toEqual([]);
    await byName("Reinforce memories while reading").toggles[0]!.toggle(true);
    await byName("Only real matches").toggles[0]!.toggle(false);
    await byName("Seconds before a read counts").texts[0]!.type("90");
    expect(saved()).toMatchObject({ autoReinforce: true, matchedOnly: false, autoReinforceSeconds: 30 });
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect(saved()).toEqual({ daemonUrl: "http://localhost:8123", token: "new-token", autoReinforce: true,
      autoReinforceSeconds: 90, matchedOnly: false });
  });

  it("saves pending typing when the tab is closed", async () => {
    vi.useFakeTimers();
    const { byName, saved, tab } = await openTab(HEALTHY());
    await byName("Token").texts[0]!.type("abc");
    tab.hide();
    expect(saved()).toMatchObject({ token: "abc" });
    await vi.advanceTimersByTimeAsync(10 * SAVE_DELAY_MS);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("marks a foreign address and a bad number, and does not save the number", async () => {
    vi.useFakeTimers();
    const { byName, saved } = await openTab(HEALTHY());
    const address = byName("Daemon address").texts[0]!;
    await address.type("http://example.com:7345");
    expect(address.inputEl.hasClass("vaultmem-invalid")).toBe(true);
    await address.type("");
    expect(address.inputEl.hasClass("vaultmem-invalid")).toBe(false);
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect((saved() as { daemonUrl: string }).daemonUrl).toBe(DEFAULT_SETTINGS.daemonUrl);
    const seconds = byName("Seconds before a read counts").texts[0]!;
    await seconds.type("0");
    expect(seconds.inputEl.hasClass("vaultmem-invalid")).toBe(true);
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect((saved() as { autoReinforceSeconds: number }).autoReinforceSeconds).toBe(30);
  });

  it("'Test connection' shows the daemon's version and vault", async () => {
    const { byName } = await openTab(HEALTHY());
    const setting = byName("Test connection");
    expect(setting.buttons[0]!.text).toBe("Test connection");
    await setting.buttons[0]!.press();
    expect(setting.desc).toBe('Connected: vaultmem 0.1.0, vault "vault" (/home/sam/vault)');
  });

  it("'Test connection' says what is wrong", async () => {
    const down = new FakeDaemon();
    down.reachable = false;
    const first = await openTab(down);
    await first.byName("Test connection").buttons[0]!.press();
    expect(first.byName("Test connection").desc).toBe(`Not connected: no daemon answers at ${BASE_URL}; start it `
      + "with `vaultmem run --vault <your vault>` (or install it as a service: `vaultmem service install --vault "
      + "<your vault>`)");

    Setting.created.length = 0;
    const badToken = HEALTHY().on("GET", "/v1/status", errorResponse(401, "unauthorized", "bad token"));
    const second = await openTab(badToken);
    await second.byName("Test connection").buttons[0]!.press();
    expect(second.byName("Test connection").desc).toBe('Not connected: vaultmem 0.1.0 answers for vault "vault", '
      + "but bad token; paste the output of `vaultmem token --vault <your vault>` in the vaultmem plugin settings");
  });

  it("'Test connection' on a hung daemon: disabled while it waits, then says it did not answer", async () => {
    vi.useFakeTimers();
    const hung = HEALTHY();
    hung.hung = true;
    const { byName } = await openTab(hung);
    const setting = byName("Test connection");
    const button = setting.buttons[0]!;
    const pressed = button.press();
    await vi.advanceTimersByTimeAsync(0);
    expect(setting.desc).toBe("Connecting…");
    expect(button.disabled).toBe(true);
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
    await pressed;
    expect(setting.desc).toBe(`Not connected: the daemon at ${BASE_URL} did not answer within 10 s; it may be busy `
      + "indexing or stuck (restart it if this persists)");
    expect(button.disabled).toBe(false);
    hung.unstick();
  });

  it("'Test connection' without a token asks for it, after finding the daemon", async () => {
    const fake = HEALTHY();
    const { byName } = await openTab(fake, {});
    await byName("Test connection").buttons[0]!.press();
    expect(byName("Test connection").desc).toBe('Not connected: vaultmem 0.1.0 answers for vault "vault", but no '
      + "token is set: run `vaultmem token --vault <your vault>` and paste what it prints in the vaultmem plugin "
      + "settings");
    expect(fake.requests.map((r) => [r.route, r.headers["Authorization"]])).toEqual([["GET /v1/health", undefined]]);
  });

  it("'Test connection' says when the daemon serves another vault", async () => {
    const other = HEALTHY().on("GET", "/v1/status", ok({ vault: "/home/sam/Work", notes: 3, memories: { total: 1 },
      embedder: "fake" }));
    const { byName } = await openTab(other);
    await byName("Test connection").buttons[0]!.press();
    expect(byName("Test connection").desc).toBe("Connected to vaultmem 0.1.0, but it serves another vault: "
      + "/home/sam/Work (this vault is /home/sam/vault). Start a daemon for this vault "
      + '(`vaultmem run --vault "/home/sam/vault"`) and set its address above.');
  });
});
