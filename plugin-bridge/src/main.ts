// The plugin's lifecycle. Everything is registered through `this.register*`, so unloading the
// plugin removes every command, view, event handler, interval and timer it added.

import { Plugin, type TFile } from "obsidian";
import { AutoReinforcer } from "./auto-reinforce";
import type { DaemonClient } from "./client";
import { openSearch, registerCommands } from "./commands";
import { Debouncer } from "./debounce";
import type { PluginHost } from "./host";
import { notify } from "./notices";
import { activeNote, localVault, memoryFingerprint, memoryIdOf, noteTags, openPluginSettings } from "./notes";
import {
  DEFAULT_SETTINGS,
  loadSettings,
  saveSettings,
  VaultmemSettingTab,
  type VaultmemSettings,
} from "./settings";
import { StatusUpdater } from "./status-updater";
import { createDaemonClient } from "./transport";
import { vaultCommand } from "./vault-check";
import { RELATED_VIEW_TYPE, REVIEW_VIEW_TYPE, RelatedView, ReviewView } from "./views";

/** How often the status bar asks the daemon for its state (skipped while a request is pending). */
export const STATUS_POLL_MS = 15_000;
/** Edits to the open note change its metadata often; its memory state is re-read after a pause. */
export const NOTE_REFRESH_DELAY_MS = 1_000;

export default class VaultmemPlugin extends Plugin implements PluginHost {
  override settings: VaultmemSettings = { ...DEFAULT_SETTINGS };
  private status: StatusUpdater | null = null;
  /** The daemon address and token the status bar last asked with. */
  private connection = "";

  override async onload(): Promise<void> {
    this.settings = await loadSettings(this);
    this.connection = connectionOf(this.settings);
    this.addSettingTab(new VaultmemSettingTab(this.app, this));
    this.registerView(REVIEW_VIEW_TYPE, (leaf) => new ReviewView(leaf, this));
    this.registerView(RELATED_VIEW_TYPE, (leaf) => new RelatedView(leaf, this));
    for (const type of [REVIEW_VIEW_TYPE, RELATED_VIEW_TYPE]) {
      this.registerHoverLinkSource(type, { display: "vaultmem", defaultMod: true });
    }
    registerCommands(this, this);
    this.addRibbonIcon("brain", "Search vaultmem memories", () => openSearch(this));

    const status = this.statusBar();
    const reinforcer = this.autoReinforcer();
    this.register(() => reinforcer.cancel());
    this.watchOpenNote(status);
    this.registerEvent(this.app.workspace.on("file-open", (file) => reinforcer.onFileOpen(file)));
    this.registerInterval(window.setInterval(() => void status.refreshDaemon(), STATUS_POLL_MS));
    this.app.workspace.onLayoutReady(() => {
      if (this.settings.token === "") {
        notify(`paste the daemon's token in the vaultmem plugin settings (\`${vaultCommand("token",
          localVault(this.app))}\` prints it); click vaultmem in the status bar to open them`, 15_000);
      }
      void status.refresh();
    });
  }

  client(): DaemonClient {
    return createDaemonClient(this.settings);
  }

  refreshStatus(): void {
    void this.status?.refresh();
  }

  /** Persists the settings; a new address or token is asked about at once. */
  async saveSettings(): Promise<void> {
    await saveSettings(this, this.settings);
    const connection = connectionOf(this.settings);
    if (connection !== this.connection) {
      this.connection = connection;
      void this.status?.refreshDaemon(true);
      void this.status?.refreshNote();
    }
  }

  /** Opens this plugin's settings tab (or says where it is, if this Obsidian cannot be asked to). */
  openSettings(): void {
    if (!openPluginSettings(this.app, this.manifest.id)) {
      notify("open Settings → Community plugins → vaultmem to set the daemon's address and token");
    }
  }

  private statusBar(): StatusUpdater {
    const el = this.addStatusBarItem();
    el.addClass("mod-clickable", "vaultmem-status");
    el.setAttr("data-tooltip-position", "top");
    this.registerDomEvent(el, "click", () => this.openSettings());
    const status = new StatusUpdater(el, this);
    this.status = status;
    this.register(() => {
      this.status = null;
    });
    return status;
  }

  /** The open note's state: re-read on file-open, and after a pause when its `stm_*` keys change. */
  private watchOpenNote(status: StatusUpdater): void {
    let seen = "";
    const remember = (): void => {
      const file = activeNote(this.app);
      seen = file === null ? "" : memoryFingerprint(this.app, file);
    };
    const later = new Debouncer(() => {
      remember();
      void status.refreshNote();
    }, NOTE_REFRESH_DELAY_MS);
    this.register(() => later.cancel());
    this.registerEvent(this.app.workspace.on("file-open", () => {
      later.cancel();
      remember();
      void status.refreshNote();
    }));
    this.registerEvent(this.app.metadataCache.on("changed", (file) => {
      const active = activeNote(this.app);
      if (file.path === active?.path && memoryFingerprint(this.app, active) !== seen) {
        later.trigger();
      }
    }));
  }

  private autoReinforcer(): AutoReinforcer<TFile> {
    return new AutoReinforcer<TFile>({
      enabled: () => this.settings.autoReinforce,
      delaySeconds: () => this.settings.autoReinforceSeconds,
      memoryId: (file) => memoryIdOf(this.app, file),
      tags: (file) => noteTags(this.app, file),
      activeFile: () => activeNote(this.app),
      observe: async (id, tags) => {
        try {
          await this.client().observe([id], tags);
          this.refreshStatus();
        } catch {
          // Reading continues undisturbed; the status bar shows the daemon's state.
        }
      },
      timers: {
        set: (callback, ms) => window.setTimeout(callback, ms),
        clear: (handle) => window.clearTimeout(handle),
      },
    });
  }
}

function connectionOf(settings: VaultmemSettings): string {
  return JSON.stringify([settings.daemonUrl.trim(), settings.token.trim()]);
}
