// What the commands, views and settings tab need from the plugin (implemented by main.ts).

import type { App } from "obsidian";
import type { DaemonClient } from "./client";
import type { VaultmemSettings } from "./settings";

export interface PluginHost {
  readonly app: App;
  settings: VaultmemSettings;
  /** A client for the daemon as currently configured. */
  client(): DaemonClient;
  /** Re-reads the daemon state and the open note's memory status for the status bar. */
  refreshStatus(): void;
}
