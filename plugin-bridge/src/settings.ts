// The plugin's settings: stored with Obsidian's loadData/saveData, edited in a settings tab.

import { PluginSettingTab, Setting, type App, type Plugin } from "obsidian";
import { isLoopbackUrl } from "./client";
import type { PluginHost } from "./host";

export interface VaultmemSettings {
  /** Where the daemon listens (`url` in its daemon.json). */
  daemonUrl: string;
  /** The daemon's bearer token (`vaultmem token` prints it). */
  token: string;
  /** Count a memory note kept open for `autoReinforceSeconds` as a use. */
  autoReinforce: boolean;
  autoReinforceSeconds: number;
}

export const DEFAULT_SETTINGS: Readonly<VaultmemSettings> = Object.freeze({
  daemonUrl: "http://127.0.0.1:7345",
  token: "",
  autoReinforce: false,
  autoReinforceSeconds: 30,
});

export const MIN_AUTO_SECONDS = 1;
export const MAX_AUTO_SECONDS = 3600;

/** Saved data (possibly from an older version, or hand-edited) merged over the defaults. */
export function normalizeSettings(saved: unknown): VaultmemSettings {
  const data = typeof saved === "object" && saved !== null ? (saved as Record<string, unknown>) : {};
  const settings: VaultmemSettings = { ...DEFAULT_SETTINGS };
  if (typeof data["daemonUrl"] === "string" && data["daemonUrl"].trim() !== "") {
    settings.daemonUrl = data["daemonUrl"].trim();
  }
  if (typeof data["token"] === "string") {
    settings.token = data["token"].trim();
  }
  if (typeof data["autoReinforce"] === "boolean") {
    settings.autoReinforce = data["autoReinforce"];
  }
  const seconds = parseSeconds(data["autoReinforceSeconds"]);
  if (seconds !== null) {
    settings.autoReinforceSeconds = seconds;
  }
  return settings;
}

/** A whole number of seconds within the allowed range, or null. */
export function parseSeconds(value: unknown): number | null {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number)) {
    return null;
  }
  return number >= MIN_AUTO_SECONDS && number <= MAX_AUTO_SECONDS ? number : null;
}

export async function loadSettings(plugin: Pick<Plugin, "loadData">): Promise<VaultmemSettings> {
  return normalizeSettings(await plugin.loadData());
}

export async function saveSettings(
  plugin: Pick<Plugin, "saveData">,
  settings: VaultmemSettings,
): Promise<void> {
  await plugin.saveData({ ...settings });
}

/** What the settings tab needs: the host plus a way to persist a change. */
export interface SettingsOwner extends PluginHost {
  saveSettings(): Promise<void>;
}

export class VaultmemSettingTab extends PluginSettingTab {
  private readonly owner: SettingsOwner;

  constructor(app: App, plugin: Plugin & SettingsOwner) {
    super(app, plugin);
    this.owner = plugin;
  }

  override display(): void {
    const { containerEl } = this;
    containerEl.empty();
    this.addAddress(containerEl);
    this.addToken(containerEl);
    this.addTestButton(containerEl);
    this.addAutoReinforce(containerEl);
  }

  private addAddress(containerEl: HTMLElement): void {
    new Setting(containerEl)
      .setName("Daemon address")
      .setDesc("Where vaultmem run listens (the url in its daemon.json). Only addresses on "
        + "this machine are used.")
      .addText((text) => text
        .setPlaceholder(DEFAULT_SETTINGS.daemonUrl)
        .setValue(this.owner.settings.daemonUrl)
        .onChange(async (value) => {
          this.owner.settings.daemonUrl = value.trim() || DEFAULT_SETTINGS.daemonUrl;
          text.inputEl.toggleClass("vaultmem-invalid", !isLoopbackUrl(this.owner.settings.daemonUrl));
          await this.owner.saveSettings();
        }));
  }

  private addToken(containerEl: HTMLElement): void {
    new Setting(containerEl)
      .setName("Token")
      .setDesc("The daemon's access token: run `vaultmem token` and paste what it prints.")
      .addText((text) => {
        text.inputEl.type = "password";
        text.setPlaceholder("token").setValue(this.owner.settings.token).onChange(async (value) => {
          this.owner.settings.token = value.trim();
          await this.owner.saveSettings();
        });
      });
  }

  private addTestButton(containerEl: HTMLElement): void {
    const setting = new Setting(containerEl)
      .setName("Test connection")
      .setDesc("Ask the daemon which version and vault it serves.");
    setting.addButton((button) => button.setButtonText("Test connection").onClick(async () => {
      setting.setDesc("Connecting…");
      setting.setDesc(await connectionSummary(this.owner));
      this.owner.refreshStatus();
    }));
  }

  private addAutoReinforce(containerEl: HTMLElement): void {
    new Setting(containerEl)
      .setName("Reinforce memories while reading")
      .setDesc("A memory note kept open for the time below counts as a use (with the note's tags "
        + "as context).")
      .addToggle((toggle) => toggle.setValue(this.owner.settings.autoReinforce).onChange(async (value) => {
        this.owner.settings.autoReinforce = value;
        await this.owner.saveSettings();
      }));
    new Setting(containerEl)
      .setName("Seconds before a read counts")
      .setDesc(`A whole number from ${MIN_AUTO_SECONDS} to ${MAX_AUTO_SECONDS}.`)
      .addText((text) => text
        .setPlaceholder(String(DEFAULT_SETTINGS.autoReinforceSeconds))
        .setValue(String(this.owner.settings.autoReinforceSeconds))
        .onChange(async (value) => {
          const seconds = parseSeconds(value);
          text.inputEl.toggleClass("vaultmem-invalid", seconds === null);
          if (seconds !== null) {
            this.owner.settings.autoReinforceSeconds = seconds;
            await this.owner.saveSettings();
          }
        }));
  }
}

/** One line for the settings tab: the daemon's version and vault, or what went wrong. */
export async function connectionSummary(host: Pick<PluginHost, "client">): Promise<string> {
  const result = await host.client().testConnection();
  if (result.ok) {
    return `Connected: vaultmem ${result.version}, vault "${result.vault}" (${result.vaultPath})`;
  }
  return `Not connected: ${result.error}`;
}
