// Two side views: the review queue (memories in the danger zone) and the notes related to the
// open note. Clicking an entry opens the note.

import { ItemView, type TFile, type WorkspaceLeaf } from "obsidian";
import { describeError } from "./client";
import type { PluginHost } from "./host";
import { activeNote, openNote } from "./notes";
import { formatScore } from "./statusbar";
import type { Memory, RelatedNote } from "./types";

export const REVIEW_VIEW_TYPE = "vaultmem-review";
export const RELATED_VIEW_TYPE = "vaultmem-related";
export const REVIEW_LIMIT = 50;
export const RELATED_TOP_K = 10;

interface Entry {
  path: string;
  title: string;
  meta: string;
}

/** A clickable list of notes; replaces whatever `container` held. */
export function renderEntries(
  container: HTMLElement,
  entries: Entry[],
  empty: string,
  open: (path: string) => void,
): void {
  if (entries.length === 0) {
    container.createDiv({ cls: "vaultmem-empty", text: empty });
    return;
  }
  const list = container.createDiv({ cls: "vaultmem-list" });
  for (const entry of entries) {
    const item = list.createDiv({ cls: "vaultmem-item", attr: { "data-path": entry.path } });
    item.createDiv({ cls: "vaultmem-item-title", text: entry.title });
    item.createDiv({ cls: "vaultmem-item-meta", text: entry.meta });
    item.addEventListener("click", () => open(entry.path));
  }
}

export function reviewEntry(memory: Memory): Entry {
  const meta = `score ${formatScore(memory.score)} · review priority ${memory.review_priority.toFixed(2)}`
    + ` · last used ${memory.last_used.slice(0, 10)}`;
  return { path: memory.path, title: memory.title, meta };
}

export function relatedEntry(note: RelatedNote): Entry {
  return { path: note.path, title: note.title, meta: `similarity ${note.similarity.toFixed(2)}` };
}

export class ReviewView extends ItemView {
  constructor(leaf: WorkspaceLeaf, private readonly host: PluginHost) {
    super(leaf);
  }

  getViewType(): string {
    return REVIEW_VIEW_TYPE;
  }

  getDisplayText(): string {
    return "vaultmem review";
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
    el.createEl("h4", { text: "Memories to review" });
    const body = el.createDiv({ cls: "vaultmem-body", text: "Loading…" });
    try {
      const review = await this.host.client().review(REVIEW_LIMIT);
      body.empty();
      body.createDiv({ cls: "vaultmem-summary", text: summary(review.items.length, review.total) });
      renderEntries(body, review.items.map(reviewEntry), "No memory is fading: nothing to review.",
        (path) => void openNote(this.app, path));
    } catch (error) {
      body.empty();
      body.createDiv({ cls: "vaultmem-error", text: describeError(error) });
    }
  }
}

function summary(shown: number, total: number): string {
  return shown < total ? `${shown} of ${total} fading memories` : `${total} fading memories`;
}

export class RelatedView extends ItemView {
  private request = 0;

  constructor(leaf: WorkspaceLeaf, private readonly host: PluginHost) {
    super(leaf);
  }

  getViewType(): string {
    return RELATED_VIEW_TYPE;
  }

  getDisplayText(): string {
    return "vaultmem related notes";
  }

  override getIcon(): string {
    return "network";
  }

  override async onOpen(): Promise<void> {
    this.registerEvent(this.app.workspace.on("file-open", () => void this.refresh()));
    await this.refresh();
  }

  /** Shows the notes related to the open note; a later call wins over a slower earlier one. */
  async refresh(): Promise<void> {
    const request = ++this.request;
    const file = activeNote(this.app);
    if (file === null) {
      this.show(request, (body) => body.createDiv({ cls: "vaultmem-empty",
        text: "Open a note to see related notes." }));
      return;
    }
    try {
      const related = await this.host.client().related(file.path, RELATED_TOP_K);
      this.show(request, (body) => renderEntries(body, related.related.map(relatedEntry),
        "No related notes.", (path) => void openNote(this.app, path)), file);
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
    el.createEl("h4", { text: file ? `Related to ${file.basename}` : "Related notes" });
    fill(el.createDiv({ cls: "vaultmem-body" }));
  }
}
