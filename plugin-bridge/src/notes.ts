// Small helpers over Obsidian's workspace and metadata cache.

import { getAllTags, Notice, TFile, type App } from "obsidian";

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

/** Opens a vault path in the current leaf; a notice when Obsidian does not know the file. */
export async function openNote(app: App, path: string): Promise<void> {
  const file = app.vault.getAbstractFileByPath(path);
  if (!(file instanceof TFile)) {
    new Notice(`vaultmem: ${path} is not in this vault`);
    return;
  }
  await app.workspace.getLeaf(false).openFile(file);
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
