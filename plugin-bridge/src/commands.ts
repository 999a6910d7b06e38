// The plugin's commands. Each action is a plain function of the host, so tests can run it.
// A command about the open memory is offered only when it applies (a memory note is open, and
// for promote/pin/unpin/restore, in a state where that makes sense).

import type { Plugin, TFile } from "obsidian";
import { describeError, isNotAMemory } from "./client";
import { confirm } from "./confirm-modal";
import type { PluginHost } from "./host";
import { notify } from "./notices";
import { activeNote, memoryInfo, revealView, type MemoryInfo } from "./notes";
import { MemorySearchModal } from "./search-modal";
import { formatScore } from "./statusbar";
import { RELATED_VIEW_TYPE, REVIEW_VIEW_TYPE, RelatedView, ReviewView } from "./views";

type Applies = (memory: MemoryInfo) => boolean;

const CAN_REINFORCE: Applies = (memory) => memory.status !== "archived";
const CAN_PROMOTE: Applies = (memory) => memory.status === "active";
const CAN_PIN: Applies = (memory) => !memory.pinned && memory.status !== "archived";
const CAN_UNPIN: Applies = (memory) => memory.pinned;
const CAN_RESTORE: Applies = (memory) => memory.status === "archived";

export function registerCommands(plugin: Plugin, host: PluginHost): void {
  plugin.addCommand({ id: "search", name: "Search memories", callback: () => openSearch(host) });
  plugin.addCommand({ id: "reinforce-current-note", name: "Reinforce current note",
    checkCallback: whenMemoryOpen(host, CAN_REINFORCE, () => void reinforceCurrentNote(host)) });
  plugin.addCommand({ id: "promote-current-memory", name: "Promote current memory now",
    checkCallback: whenMemoryOpen(host, CAN_PROMOTE, () => void promoteCurrentMemory(host)) });
  plugin.addCommand({ id: "pin-current-memory", name: "Pin current memory",
    checkCallback: whenMemoryOpen(host, CAN_PIN, () => void pinCurrentMemory(host)) });
  plugin.addCommand({ id: "unpin-current-memory", name: "Unpin current memory",
    checkCallback: whenMemoryOpen(host, CAN_UNPIN, () => void unpinCurrentMemory(host)) });
  plugin.addCommand({ id: "restore-current-memory", name: "Restore current memory from the archive",
    checkCallback: whenMemoryOpen(host, CAN_RESTORE, () => void restoreCurrentMemory(host)) });
  plugin.addCommand({ id: "show-review-queue", name: "Show review queue",
    callback: () => void showReviewQueue(host) });
  plugin.addCommand({ id: "show-related-notes", name: "Show related notes",
    callback: () => void showRelatedNotes(host) });
}

/** A check callback: available only while a memory note for which `applies` holds is open. */
function whenMemoryOpen(host: PluginHost, applies: Applies, run: () => void): (checking: boolean) => boolean {
  return (checking) => {
    const file = activeNote(host.app);
    const memory = file === null ? null : memoryInfo(host.app, file);
    if (memory === null || !applies(memory)) {
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
    notify("open a note first");
    return null;
  }
  const memory = memoryInfo(host.app, file);
  if (memory === null) {
    notAMemory(file);
    return null;
  }
  return { file, id: memory.id };
}

function notAMemory(file: TFile): void {
  notify(`"${file.basename}" is not a memory`);
}

function reportError(error: unknown, file: TFile): void {
  if (isNotAMemory(error)) {
    notAMemory(file);
  } else {
    notify(describeError(error));
  }
}

export async function reinforceCurrentNote(host: PluginHost): Promise<void> {
  const current = currentMemory(host);
  if (current === null) {
    return;
  }
  try {
    const memory = await host.client().touch(current.id, true);
    notify(`reinforced "${memory.title}": score ${formatScore(memory.score)}, ${memory.use_count} uses`);
    host.refreshStatus();
  } catch (error) {
    reportError(error, current.file);
  }
}

/** Asks first (the note moves to the promoted folder), then shows a notice while it works. */
export async function promoteCurrentMemory(host: PluginHost): Promise<void> {
  const current = currentMemory(host);
  if (current === null) {
    return;
  }
  const name = current.file.basename;
  const yes = await confirm(host.app, {
    title: "Promote this memory?",
    text: `"${name}" moves to the promoted folder as a long-term note: it keeps its id, is never `
      + "forgotten, and gains links to related notes.",
    confirm: "Promote",
  });
  if (!yes) {
    return;
  }
  const working = notify(`promoting "${name}"…`, 0);
  try {
    const result = await host.client().promote(current.id);
    const move = result.promoted[0];
    notify(move !== undefined ? `promoted "${name}" to ${move.to}` : `"${name}" was not promoted`);
    host.refreshStatus();
  } catch (error) {
    reportError(error, current.file);
  } finally {
    working.hide();
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
    notify(pinned ? `pinned "${memory.title}": it will not be forgotten` : `unpinned "${memory.title}"`);
    host.refreshStatus();
  } catch (error) {
    reportError(error, current.file);
  }
}

/** An archived memory becomes active again and moves back out of the archive folder. */
export async function restoreCurrentMemory(host: PluginHost): Promise<void> {
  const current = currentMemory(host);
  if (current === null) {
    return;
  }
  try {
    const result = await host.client().restore(current.id);
    notify(`restored "${result.memory.title}" to ${result.restored.to}`);
    host.refreshStatus();
  } catch (error) {
    reportError(error, current.file);
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
