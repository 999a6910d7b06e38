// The plugin's settings: stored with Obsidian's loadData/saveData, edited in a settings tab.
// The tab's rows are declared once: Obsidian 1.13+ lists them in its settings search
// (`getSettingDefinitions`), older versions draw the same rows through `display()`.

import {
  PluginSettingTab,
  Setting,
  type App,
  type ButtonComponent,
  type Plugin,
  type SettingDefinitionItem,
} from "obsidian";
import { isLoopbackUrl } from "./client";
import { Debouncer } from "./debounce";
import type { PluginHost } from "./host";
import { localVault } from "./notes";
import { describeLocalVault, servesThisVault, vaultCommand } from "./vault-check";

export interface VaultmemSettings {
  /** Where the daemon listens (`url` in its daemon.json). */
  daemonUrl: string;
  /** The daemon's bearer token (`vaultmem token` prints it). */
  token: string;
  /** Count a memory note kept open for `autoReinforceSeconds` as a use. */
  autoReinforce: boolean;
  autoReinforceSeconds: number;
  /** Search shows only real matches (`matched_only`), not merely the nearest notes. */
  matchedOnly: boolean;
}

export const DEFAULT_SETTINGS: Readonly<VaultmemSettings> = Object.freeze({
  daemonUrl: "http://127.0.0.1:7345",
  token: "",
  autoReinforce: false,
  autoReinforceSeconds: 30,
  matchedOnly: true,
});

export const MIN_AUTO_SECONDS = 1;
export const MAX_AUTO_SECONDS = 3600;
/** Typing in a text field saves (and re-checks the daemon) once the typing pauses. */
export const SAVE_DELAY_MS = 600;

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
  if (typeof data["matchedOnly"] === "boolean") {
    settings.matchedOnly = data["matchedOnly"];
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

/** One row of the tab: its name and description (searchable) and how to fill it. */
interface Row {
  name: string;
  desc: string;
  aliases?: string[];
  fill(setting: Setting): void;
}

export class VaultmemSettingTab extends PluginSettingTab {
  private readonly owner: SettingsOwner;
  private readonly pendingSave: Debouncer;

  constructor(app: App, plugin: Plugin & SettingsOwner) {
    super(app, plugin);
    this.owner = plugin;
    this.pendingSave = new Debouncer(() => void this.owner.saveSettings(), SAVE_DELAY_MS);
  }

  /** Obsidian 1.13+: the rows, for the tab and for the settings search. */
  override getSettingDefinitions(): SettingDefinitionItem[] {
    return this.rows().map((row) => ({
      name: row.name,
      desc: row.desc,
      aliases: row.aliases ?? [],
      render: (setting: Setting) => this.draw(setting, row),
    }));
  }

  /** Obsidian before 1.13: the same rows, drawn by hand. */
  override display(): void {
    const { containerEl } = this;
    containerEl.empty();
    for (const row of this.rows()) {
      this.draw(new Setting(containerEl), row);
    }
  }

  /** Leaving the tab saves what was typed last. */
  override hide(): void {
    this.pendingSave.flush();
    super.hide();
  }

  private draw(setting: Setting, row: Row): void {
    setting.setName(row.name).setDesc(row.desc);
    row.fill(setting);
  }

  private rows(): Row[] {
    return [this.addressRow(), this.tokenRow(), this.testRow(), this.matchedOnlyRow(),
      this.autoReinforceRow(), this.secondsRow()];
  }

  /** A text change: kept at once, saved when the typing pauses. */
  private changed(): void {
    this.pendingSave.trigger();
  }

  private addressRow(): Row {
    return {
      name: "Daemon address",
      desc: "Where vaultmem run listens (the url in its daemon.json). Only addresses on this machine "
        + "are used.",
      aliases: ["url", "port", "host"],
      fill: (setting) => {
        setting.addText((text) => text
          .setPlaceholder(DEFAULT_SETTINGS.daemonUrl)
          .setValue(this.owner.settings.daemonUrl)
          .onChange((value) => {
            this.owner.settings.daemonUrl = value.trim() || DEFAULT_SETTINGS.daemonUrl;
            text.inputEl.toggleClass("vaultmem-invalid", !isLoopbackUrl(this.owner.settings.daemonUrl));
            this.changed();
          }));
      },
    };
  }

  private tokenRow(): Row {
    return {
      name: "Token",
      desc: `The daemon's access token: run \`${vaultCommand("token", localVault(this.app))}\` and paste what `
        + "it prints.",
      aliases: ["password", "bearer"],
      fill: (setting) => {
        setting.addText((text) => {
          text.inputEl.type = "password";
          text.setPlaceholder("Paste the token").setValue(this.owner.settings.token).onChange((value) => {
            this.owner.settings.token = value.trim();
            this.changed();
          });
        });
      },
    };
  }

  private testRow(): Row {
    return {
      name: "Test connection",
      desc: "Ask the daemon which version and vault it serves.",
      aliases: ["check", "daemon"],
      fill: (setting) => {
        setting.addButton((button) => button.setButtonText("Test connection")
          .onClick(() => this.testConnection(setting, button)));
      },
    };
  }

  private async testConnection(setting: Setting, button: ButtonComponent): Promise<void> {
    this.pendingSave.flush();
    button.setDisabled(true);
    setting.setDesc("Connecting…");
    try {
      setting.setDesc(await connectionSummary(this.owner));
    } finally {
      button.setDisabled(false);
    }
    this.owner.refreshStatus();
  }

  private matchedOnlyRow(): Row {
    return this.toggleRow("matchedOnly", "Only real matches",
      "Search lists only notes that really match the query. Turn off to also see the nearest "
        + "notes when nothing matches well.",
      ["search", "relevance", "threshold"]);
  }

  private autoReinforceRow(): Row {
    return this.toggleRow("autoReinforce", "Reinforce memories while reading",
      "A memory note kept open for the time below counts as a use (with the note's tags as context).",
      ["auto", "observe"]);
  }

  /** A row with one switch for a boolean setting, saved as soon as it is flipped. */
  private toggleRow(
    key: "matchedOnly" | "autoReinforce", name: string, desc: string, aliases: string[],
  ): Row {
    return {
      name, desc, aliases,
      fill: (setting) => {
        setting.addToggle((toggle) => toggle.setValue(this.owner.settings[key])
          .onChange(async (value) => {
            this.owner.settings[key] = value;
            await this.owner.saveSettings();
          }));
      },
    };
  }

  private secondsRow(): Row {
    return {
      name: "Seconds before a read counts",
      desc: `A whole number from ${MIN_AUTO_SECONDS} to ${MAX_AUTO_SECONDS}.`,
      fill: (setting) => {
        setting.addText((text) => text
          .setPlaceholder(String(DEFAULT_SETTINGS.autoReinforceSeconds))
          .setValue(String(this.owner.settings.autoReinforceSeconds))
          .onChange((value) => {
            const seconds = parseSeconds(value);
            text.inputEl.toggleClass("vaultmem-invalid", seconds === null);
            if (seconds !== null) {
              this.owner.settings.autoReinforceSeconds = seconds;
              this.changed();
            }
          }));
      },
    };
  }
}

/** One line for the settings tab: the daemon's version and vault, or what went wrong. */
export async function connectionSummary(host: Pick<PluginHost, "app" | "client">): Promise<string> {
  const result = await host.client().testConnection();
  if (!result.ok) {
    return `Not connected: ${result.error}`;
  }
  const local = localVault(host.app);
  if (!servesThisVault(local, result.vaultPath)) {
    return `Connected to vaultmem ${result.version}, but it serves another vault: ${result.vaultPath} `
      + `(this vault is ${describeLocalVault(local)}). Start a daemon for this vault `
      + `(\`${vaultCommand("run", local)}\`) and set its address above.`;
  }
  return `Connected: vaultmem ${result.version}, vault "${result.vault}" (${result.vaultPath})`;
}
