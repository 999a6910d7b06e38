import { describe, expect, it } from "vitest";
import VaultmemPlugin from "../src/main";
import {
  DEFAULT_SETTINGS,
  loadSettings,
  normalizeSettings,
  parseSeconds,
  saveSettings,
  VaultmemSettingTab,
} from "../src/settings";
import { asApp, BASE_URL, errorResponse, FakeDaemon, ok, TOKEN } from "./helpers";
import { App, Plugin, Setting, type PluginManifest } from "./obsidian-mock";

const MANIFEST: PluginManifest = {
  id: "vaultmem-bridge", name: "vaultmem", version: "0.1.0", minAppVersion: "1.5.7",
  description: "test", author: "vaultmem",
};

describe("settings values", () => {
  it("has the documented defaults", () => {
    expect(DEFAULT_SETTINGS).toEqual({
      daemonUrl: "http://127.0.0.1:7345", token: "", autoReinforce: false, autoReinforceSeconds: 30 });
  });

  it("uses the defaults for missing or malformed saved data", () => {
    expect(normalizeSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings("junk")).toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings({ daemonUrl: 7, token: null, autoReinforce: "yes", autoReinforceSeconds: -3 }))
      .toEqual(DEFAULT_SETTINGS);
    expect(normalizeSettings({ daemonUrl: "   " }).daemonUrl).toBe(DEFAULT_SETTINGS.daemonUrl);
  });

  it("keeps valid saved values over the defaults", () => {
    expect(normalizeSettings({ daemonUrl: " http://localhost:9000 ", token: " abc\n", autoReinforce: true,
      autoReinforceSeconds: 45, unknown: 1 }))
      .toEqual({ daemonUrl: "http://localhost:9000", token: "abc", autoReinforce: true, autoReinforceSeconds: 45 });
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

describe("settings tab", () => {
  it("shows every setting with its current value", async () => {
    const { byName } = await openTab(HEALTHY(), { token: TOKEN, autoReinforceSeconds: 20 });
    expect(Setting.created.map((s) => s.name)).toEqual(["Daemon address", "Token", "Test connection",
      "Reinforce memories while reading", "Seconds before a read counts"]);
    expect(byName("Daemon address").texts[0]!.getValue()).toBe(BASE_URL);
    expect(byName("Token").texts[0]!.getValue()).toBe(TOKEN);
    expect(byName("Token").texts[0]!.inputEl.type).toBe("password");
    expect(byName("Reinforce memories while reading").toggles[0]!.getValue()).toBe(false);
    expect(byName("Seconds before a read counts").texts[0]!.getValue()).toBe("20");
  });

  it("saves what the user types", async () => {
    const { byName, saved } = await openTab(HEALTHY());
    await byName("Daemon address").texts[0]!.type("http://localhost:8123 ");
    await byName("Token").texts[0]!.type(" new-token ");
    await byName("Reinforce memories while reading").toggles[0]!.toggle(true);
    await byName("Seconds before a read counts").texts[0]!.type("90");
    expect(saved()).toEqual({ daemonUrl: "http://localhost:8123", token: "new-token", autoReinforce: true,
      autoReinforceSeconds: 90 });
  });

  it("marks a foreign address and a bad number, and does not save the number", async () => {
    const { byName, saved } = await openTab(HEALTHY());
    const address = byName("Daemon address").texts[0]!;
    await address.type("http://example.com:7345");
    expect(address.inputEl.hasClass("vaultmem-invalid")).toBe(true);
    await address.type("");
    expect(address.inputEl.hasClass("vaultmem-invalid")).toBe(false);
    expect((saved() as { daemonUrl: string }).daemonUrl).toBe(DEFAULT_SETTINGS.daemonUrl);
    const seconds = byName("Seconds before a read counts").texts[0]!;
    await seconds.type("0");
    expect(seconds.inputEl.hasClass("vaultmem-invalid")).toBe(true);
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
    expect(first.byName("Test connection").desc).toBe(`Not connected: vaultmem daemon unreachable at ${BASE_URL}`);

    Setting.created.length = 0;
    const badToken = HEALTHY().on("GET", "/v1/status", errorResponse(401, "unauthorized", "bad token"));
    const second = await openTab(badToken);
    await second.byName("Test connection").buttons[0]!.press();
    expect(second.byName("Test connection").desc)
      .toBe("Not connected: bad token; paste it in the vaultmem plugin settings");
  });
});
