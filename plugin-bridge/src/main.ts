// The plugin's lifecycle. Everything is registered through `this.register*`, so unloading the
// plugin removes every command, view, event handler, interval and timer it added.

import { Plugin, type TFile } from "obsidian";
import { AutoReinforcer } from "./auto-reinforce";
import type { DaemonClient } from "./client";
import { openSearch, registerCommands } from "./commands";
import type { PluginHost } from "./host";
import { activeNote, memoryIdOf, noteTags } from "./notes";
import {
  DEFAULT_SETTINGS,
  loadSettings,
  saveSettings,
  VaultmemSettingTab,
  type VaultmemSettings,
} from "./settings";
import { StatusUpdater } from "./status-updater";
import { createDaemonClient } from "./transport";
import { RELATED_VIEW_TYPE, REVIEW_VIEW_TYPE, RelatedView, ReviewView } from "./views";

/** How often the status bar asks the daemon for its state. */
export const STATUS_POLL_MS = 15_000;

export default class VaultmemPlugin extends Plugin implements PluginHost {
  override settings: VaultmemSettings = { ...DEFAULT_SETTINGS };
  private status: StatusUpdater | null = null;

  override async onload(): Promise<void> {
    this.settings = await loadSettings(this);
    this.addSettingTab(new VaultmemSettingTab(this.app, this));
    this.registerView(REVIEW_VIEW_TYPE, (leaf) => new ReviewView(leaf, this));
    this.registerView(RELATED_VIEW_TYPE, (leaf) => new RelatedView(leaf, this));
    registerCommands(this, this);
    this.addRibbonIcon("brain", "Search vaultmem memories", () => openSearch(this));

    const status = new StatusUpdater(this.addStatusBarItem(), this);
    this.status = status;
    this.register(() => {
      this.status = null;
    });
    const reinforcer = this.autoReinforcer();
    this.register(() => reinforcer.cancel());

    this.registerEvent(this.app.workspace.on("file-open", (file) => {
      void status.refreshNote();
      reinforcer.onFileOpen(file);
    }));
    this.registerEvent(this.app.metadataCache.on("changed", (file) => {
      if (file.path === activeNote(this.app)?.path) {
        void status.refreshNote();
      }
    }));
    this.registerInterval(window.setInterval(() => void status.refreshDaemon(), STATUS_POLL_MS));
    this.app.workspace.onLayoutReady(() => void status.refresh());
  }

  client(): DaemonClient {
    return createDaemonClient(this.settings);
  }

  refreshStatus(): void {
    void this.status?.refresh();
  }

  async saveSettings(): Promise<void> {
    await saveSettings(this, this.settings);
    this.refreshStatus();
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
