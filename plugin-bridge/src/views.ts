// Two side views: the review queue (memories in the danger zone) and the notes related to the
// open note. Entries are keyboard-usable: Tab to reach them, ↑/↓ to move, Enter to open, Mod
// (click or Enter) for a new tab; hovering shows Obsidian's page preview.

import { ItemView, type TFile, type UserEvent, type WorkspaceLeaf } from "obsidian";
import { describeError } from "./client";
import { Debouncer } from "./debounce";
import type { PluginHost } from "./host";
import { activeNote, openNote, paneFor } from "./notes";
import { formatScore } from "./statusbar";
import type { Memory, ProposedUpdate, RelatedNote } from "./types";

export const REVIEW_VIEW_TYPE = "vaultmem-review";
export const RELATED_VIEW_TYPE = "vaultmem-related";
export const REVIEW_LIMIT = 50;
export const RELATED_TOP_K = 10;
/** Opening notes in quick succession asks for the last one's related notes only. */
export const RELATED_DELAY_MS = 300;

export interface Entry {
  path: string;
  title: string;
  meta: string;
}

export interface EntryActions {
  open(path: string, event: UserEvent | null): void;
  hover(path: string, event: MouseEvent, target: HTMLElement): void;
}

/** A list of notes to open with the mouse or the keyboard; replaces whatever `container` held. */
export function renderEntries(container: HTMLElement, entries: Entry[], empty: string, actions: EntryActions): void {
  if (entries.length === 0) {
    container.createDiv({ cls: "vaultmem-empty", text: empty });
    return;
  }
  const list = container.createDiv({ cls: "vaultmem-list", attr: { role: "list" } });
  const items: HTMLElement[] = [];
  entries.forEach((entry, index) => {
    const item = list.createDiv({ cls: "vaultmem-item",
      attr: { "data-path": entry.path, tabindex: "0", role: "listitem", "aria-label": entry.title } });
    item.createDiv({ cls: "vaultmem-item-title", text: entry.title });
    item.createDiv({ cls: "vaultmem-item-meta", text: entry.meta });
    item.addEventListener("click", (event) => actions.open(entry.path, event));
    item.addEventListener("auxclick", (event) => {
      if (event.button === 1) {
        actions.open(entry.path, event);
      }
    });
    item.addEventListener("mouseover", (event) => actions.hover(entry.path, event, item));
    item.addEventListener("keydown", (event) => onKey(event, index, items, () => actions.open(entry.path, event)));
    items.push(item);
  });
}

function onKey(event: KeyboardEvent, index: number, items: HTMLElement[], open: () => void): void {
  const step = event.key === "ArrowDown" ? 1 : event.key === "ArrowUp" ? -1 : 0;
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    open();
  } else if (step !== 0) {
    event.preventDefault();
    items[index + step]?.focus();
  }
}

export function reviewEntry(memory: Memory): Entry {
  const meta = `score ${formatScore(memory.score)} · review priority ${memory.review_priority.toFixed(2)}`
    + ` · last used ${memory.last_used.slice(0, 10)}`;
  return { path: memory.path, title: memory.title, meta };
}

/** A proposed update in the review view: the newer memory, to open and compare. */
export function updateEntry(update: ProposedUpdate): Entry {
  return {
    path: update.by.path ?? update.path,
    title: `${update.by.title ?? update.by.id} may replace ${update.title}`,
    meta: `possible update: ${update.reason}`,
  };
}

export function relatedEntry(note: RelatedNote): Entry {
  return { path: note.path, title: note.title, meta: `similarity ${note.similarity.toFixed(2)}` };
}

/** The shared part of both views: opening and previewing an entry. */
abstract class NoteListView extends ItemView {
  protected readonly entryActions: EntryActions = {
    open: (path, event) => void openNote(this.app, path, paneFor(event)),
    hover: (path, event, target) => {
      this.app.workspace.trigger("hover-link", {
        event, source: this.getViewType(), hoverParent: this.leaf, targetEl: target, linktext: path, sourcePath: "",
      });
    },
  };
}

export class ReviewView extends NoteListView {
  constructor(leaf: WorkspaceLeaf, private readonly host: PluginHost) {
    super(leaf);
  }

  getViewType(): string {
    return REVIEW_VIEW_TYPE;
  }

  getDisplayText(): string {
    return "Memory review";
  }

  override getIcon(): string {
    return "history";
  }

  override async onOpen(): Promise<void> {
    this.addAction("refresh-cw", "Refresh", () => void this.refresh());
    await this.refresh();
  }

  async refresh(): Promise<void> {
    const el = this.contentEl;
    el.empty();
    el.createDiv({ cls: "vaultmem-heading", text: "Memories to review" });
    const body = el.createDiv({ cls: "vaultmem-body", text: "Loading…" });
    try {
      const review = await this.host.client().review(REVIEW_LIMIT);
      body.empty();
      body.createDiv({ cls: "vaultmem-summary", text: summary(review.items.length, review.total) });
      renderEntries(body, review.items.map(reviewEntry), "No memory is fading: nothing to review.", this.entryActions);
      const updates = review.updates ?? [];
      if (updates.length > 0) {
        body.createDiv({ cls: "vaultmem-heading", text: "Possible updates" });
        renderEntries(body, updates.map(updateEntry), "", this.entryActions);
      }
    } catch (error) {
      body.empty();
      body.createDiv({ cls: "vaultmem-error", text: describeError(error) });
    }
  }
}

function summary(shown: number, total: number): string {
  return shown < total ? `${shown} of ${total} fading memories` : `${total} fading memories`;
}

export class RelatedView extends NoteListView {
  private request = 0;
  /** The note whose related notes are shown (or being fetched); null for none. */
  private shownPath: string | null | undefined = undefined;
  private readonly later = new Debouncer(() => void this.refresh(), RELATED_DELAY_MS);

  constructor(leaf: WorkspaceLeaf, private readonly host: PluginHost) {
    super(leaf);
  }

  getViewType(): string {
    return RELATED_VIEW_TYPE;
  }

  getDisplayText(): string {
    return "Related notes";
  }

  override getIcon(): string {
    return "network";
  }

  override async onOpen(): Promise<void> {
    this.registerEvent(this.app.workspace.on("file-open", () => this.onNoteChange()));
    this.registerEvent(this.app.workspace.on("layout-change", () => this.onNoteChange()));
    this.registerEvent(this.app.workspace.on("active-leaf-change", () => this.onNoteChange()));
    this.register(() => this.later.cancel());
    await this.refresh();
  }

  /**
   * Another note is open, or the view may have come into sight: a visible view that shows
   * another note's list clears it at once and asks the daemon after a pause; a hidden view
   * asks nothing and catches up when it is shown.
   */
  private onNoteChange(): void {
    const file = activeNote(this.app);
    if (!this.containerEl.isShown() || (file?.path ?? null) === this.shownPath) {
      return;
    }
    this.request += 1;
    this.shownPath = file?.path ?? null;
    this.show(this.request, (body) => body.createDiv({ cls: "vaultmem-empty", text: "Loading…" }), file ?? undefined);
    this.later.trigger();
  }

  /** Shows the notes related to the open note; a later call wins over a slower earlier one. */
  async refresh(): Promise<void> {
    this.later.cancel();
    const request = ++this.request;
    const file = activeNote(this.app);
    this.shownPath = file?.path ?? null;
    if (file === null) {
      this.show(request, (body) => body.createDiv({ cls: "vaultmem-empty",
        text: "Open a note to see related notes." }));
      return;
    }
    try {
      const related = await this.host.client().related(file.path, RELATED_TOP_K);
      this.show(request, (body) => renderEntries(body, related.related.map(relatedEntry),
        "No related notes.", this.entryActions), file);
    } catch (error) {
      const message = describeError(error);
      this.show(request, (body) => body.createDiv({ cls: "vaultmem-error", text: message }), file);
    }
  }

  private show(request: number, fill: (body: HTMLElement) => void, file?: TFile): void {
    if (request !== this.request) {
      return;
    }
    const el = this.contentEl;
    el.empty();
    el.createDiv({ cls: "vaultmem-heading", text: file ? `Related to ${file.basename}` : "Related notes" });
    fill(el.createDiv({ cls: "vaultmem-body" }));
  }
}
