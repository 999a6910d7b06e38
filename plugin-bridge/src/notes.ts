// Small helpers over Obsidian's workspace, vault and metadata cache.

import {
  FileSystemAdapter,
  getAllTags,
  Keymap,
  TFile,
  type App,
  type PaneType,
  type UserEvent,
} from "obsidian";
import { notify } from "./notices";
import type { LocalVault } from "./vault-check";

/** The open Markdown note, if any. */
export function activeNote(app: App): TFile | null {
  const file = app.workspace.getActiveFile();
  return file !== null && file.extension === "md" ? file : null;
}

/** The note's memory id (`stm_id` in its frontmatter), or null for a regular note. */
export function memoryIdOf(app: App, file: TFile): string | null {
  const id: unknown = app.metadataCache.getFileCache(file)?.frontmatter?.["stm_id"];
  if (typeof id === "string" && id.trim() !== "") {
    return id.trim();
  }
  return typeof id === "number" ? String(id) : null;
}

/** What the frontmatter says about a memory note: enough to offer the commands that apply. */
export interface MemoryInfo {
  id: string;
  status: string;
  pinned: boolean;
}

export function memoryInfo(app: App, file: TFile): MemoryInfo | null {
  const id = memoryIdOf(app, file);
  if (id === null) {
    return null;
  }
  const frontmatter = app.metadataCache.getFileCache(file)?.frontmatter ?? {};
  const status: unknown = frontmatter["stm_status"];
  return {
    id,
    status: typeof status === "string" && status.trim() !== "" ? status.trim() : "active",
    pinned: frontmatter["stm_pinned"] === true || frontmatter["stm_pinned"] === "true",
  };
}

/** The note's `stm_*` frontmatter as one string: it changes only when the memory's state does. */
export function memoryFingerprint(app: App, file: TFile): string {
  const frontmatter = app.metadataCache.getFileCache(file)?.frontmatter ?? {};
  const own = Object.keys(frontmatter).filter((key) => key.startsWith("stm_")).sort()
    .map((key) => [key, frontmatter[key] as unknown]);
  return JSON.stringify(own);
}

const MAX_TAGS = 64;
const MAX_TAG_LENGTH = 200;

/** The note's tags (frontmatter and inline), without `#`, as the daemon accepts them. */
export function noteTags(app: App, file: TFile): string[] {
  const cache = app.metadataCache.getFileCache(file);
  const tags = cache ? getAllTags(cache) ?? [] : [];
  const clean = tags
    .map((tag) => tag.replace(/^#/, ""))
    .filter((tag) => tag.length > 0 && tag.length <= MAX_TAG_LENGTH);
  return [...new Set(clean)].slice(0, MAX_TAGS);
}

/** Where a click or key press opens a note: a new tab (or split, window) with Mod held or a middle-click. */
export function paneFor(event: UserEvent | null | undefined): PaneType | boolean {
  if (!event) {
    return false;
  }
  if ("button" in event && event.button === 1) {
    return "tab";
  }
  return Keymap.isModEvent(event);
}

/** Opens a vault path in the current leaf (or `pane`); a notice when Obsidian does not know it. */
export async function openNote(app: App, path: string, pane: PaneType | boolean = false): Promise<void> {
  const file = app.vault.getAbstractFileByPath(path);
  if (!(file instanceof TFile)) {
    notify(`${path} is not in this vault`);
    return;
  }
  await app.workspace.getLeaf(pane).openFile(file);
}

/** Shows the view of this type in the right sidebar, creating it if needed. */
export async function revealView(app: App, type: string): Promise<void> {
  const existing = app.workspace.getLeavesOfType(type)[0];
  const leaf = existing ?? app.workspace.getRightLeaf(false);
  if (!leaf) {
    return;
  }
  if (!existing) {
    await leaf.setViewState({ type, active: true });
  }
  await app.workspace.revealLeaf(leaf);
}

/** This vault's name and, on desktop, its folder. */
export function localVault(app: App): LocalVault {
  const adapter = app.vault.adapter;
  return {
    name: app.vault.getName(),
    path: adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null,
  };
}

/** Obsidian's settings window: not in the published API, so reached with care. */
interface SettingsWindow {
  open(): void;
  openTabById(id: string): unknown;
}

/** Opens the plugin's settings tab; false when this Obsidian offers no way to. */
export function openPluginSettings(app: App, pluginId: string): boolean {
  const setting = (app as unknown as { setting?: Partial<SettingsWindow> }).setting;
  if (typeof setting?.open !== "function" || typeof setting.openTabById !== "function") {
    return false;
  }
  setting.open();
  setting.openTabById(pluginId);
  return true;
}
