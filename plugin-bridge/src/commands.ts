// The plugin's commands. Each action is a plain function of the host, so tests can run it.

import { Notice, type Plugin, type TFile } from "obsidian";
import { describeError, isNotAMemory } from "./client";
import type { PluginHost } from "./host";
import { activeNote, memoryIdOf, revealView } from "./notes";
import { MemorySearchModal } from "./search-modal";
import { formatScore } from "./statusbar";
import { RELATED_VIEW_TYPE, REVIEW_VIEW_TYPE, RelatedView, ReviewView } from "./views";

export function registerCommands(plugin: Plugin, host: PluginHost): void {
  plugin.addCommand({ id: "search", name: "Search memories", callback: () => openSearch(host) });
  plugin.addCommand({
    id: "reinforce-current-note",
    name: "Reinforce current note",
    checkCallback: whenNoteOpen(host, () => void reinforceCurrentNote(host)),
  });
  plugin.addCommand({
    id: "promote-current-memory",
    name: "Promote current memory now",
    checkCallback: whenNoteOpen(host, () => void promoteCurrentMemory(host)),
  });
  plugin.addCommand({
    id: "pin-current-memory",
    name: "Pin current memory",
    checkCallback: whenNoteOpen(host, () => void pinCurrentMemory(host)),
  });
  plugin.addCommand({
    id: "unpin-current-memory",
    name: "Unpin current memory",
    checkCallback: whenNoteOpen(host, () => void unpinCurrentMemory(host)),
  });
  plugin.addCommand({ id: "show-review-queue", name: "Show review queue",
    callback: () => void showReviewQueue(host) });
  plugin.addCommand({ id: "show-related-notes", name: "Show related notes",
    callback: () => void showRelatedNotes(host) });
}

function whenNoteOpen(host: PluginHost, run: () => void): (checking: boolean) => boolean {
  return (checking) => {
    if (activeNote(host.app) === null) {
      return false;
    }
    if (!checking) {
      run();
    }
    return true;
  };
}

export function openSearch(host: PluginHost): MemorySearchModal {
  const modal = new MemorySearchModal(host);
  modal.open();
  return modal;
}

/** The open note and its memory id, or a notice saying why there is none. */
function currentMemory(host: PluginHost): { file: TFile; id: string } | null {
  const file = activeNote(host.app);
  if (file === null) {
    new Notice("vaultmem: open a note first");
    return null;
  }
  const id = memoryIdOf(host.app, file);
  if (id === null) {
    notAMemory(file);
    return null;
  }
  return { file, id };
}

function notAMemory(file: TFile): void {
  new Notice(`vaultmem: "${file.basename}" is not a memory`);
}

export async function reinforceCurrentNote(host: PluginHost): Promise<void> {
  const current = currentMemory(host);
  if (current === null) {
    return;
  }
  try {
    const memory = await host.client().touch(current.id, true);
    new Notice(`vaultmem: reinforced "${memory.title}": score ${formatScore(memory.score)}, `
      + `${memory.use_count} uses`);
    host.refreshStatus();
  } catch (error) {
    if (isNotAMemory(error)) {
      notAMemory(current.file);
    } else {
      new Notice(`vaultmem: ${describeError(error)}`);
    }
  }
}

export async function promoteCurrentMemory(host: PluginHost): Promise<void> {
  const current = currentMemory(host);
  if (current === null) {
    return;
  }
  try {
    const result = await host.client().promote(current.id);
    const move = result.promoted[0];
    if (move !== undefined) {
      new Notice(`vaultmem: promoted "${current.file.basename}" to ${move.to}`);
    } else {
      new Notice(`vaultmem: "${current.file.basename}" was not promoted`);
    }
    host.refreshStatus();
  } catch (error) {
    new Notice(`vaultmem: ${describeError(error)}`);
  }
}

export function pinCurrentMemory(host: PluginHost): Promise<void> {
  return setCurrentPinned(host, true);
}

export function unpinCurrentMemory(host: PluginHost): Promise<void> {
  return setCurrentPinned(host, false);
}

async function setCurrentPinned(host: PluginHost, pinned: boolean): Promise<void> {
  const current = currentMemory(host);
  if (current === null) {
    return;
  }
  try {
    const memory = await host.client().setPinned(current.id, pinned);
    new Notice(pinned
      ? `vaultmem: Pinned: ${memory.title} — it will not be forgotten`
      : `vaultmem: Unpinned: ${memory.title}`);
    host.refreshStatus();
  } catch (error) {
    if (isNotAMemory(error)) {
      notAMemory(current.file);
    } else {
      new Notice(`vaultmem: ${describeError(error)}`);
    }
  }
}

export function showReviewQueue(host: PluginHost): Promise<void> {
  return showView(host, REVIEW_VIEW_TYPE);
}

export function showRelatedNotes(host: PluginHost): Promise<void> {
  return showView(host, RELATED_VIEW_TYPE);
}

/** Reveals the view; one that was already open is refreshed (a new one loads on open). */
async function showView(host: PluginHost, type: string): Promise<void> {
  const existing = host.app.workspace.getLeavesOfType(type);
  await revealView(host.app, type);
  for (const leaf of existing) {
    if (leaf.view instanceof ReviewView || leaf.view instanceof RelatedView) {
      await leaf.view.refresh();
    }
  }
}
