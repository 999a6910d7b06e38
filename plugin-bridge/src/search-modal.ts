// "Search memories": results from the daemon's hybrid search as the user types (one search once
// the typing pauses, not one per keystroke); choosing one opens the note, Mod opens a new tab.

import { SuggestModal } from "obsidian";
import { describeError } from "./client";
import { LatestLookup } from "./debounce";
import type { PluginHost } from "./host";
import { openNote, paneFor } from "./notes";
import { formatScore } from "./statusbar";
import type { IndexState, SearchResult } from "./types";

export const SEARCH_TOP_K = 20;
/** A search starts once the typing has paused this long. */
export const SEARCH_DELAY_MS = 250;
export const PROMPT_TEXT = "Type to search your memories and notes.";

/** What the empty list says after a search for `query` found nothing. */
export function nothingFoundText(query: string, matchedOnly: boolean): string {
  return matchedOnly
    ? `Nothing relevant found for "${query}". (Only real matches are shown: see the vaultmem settings.)`
    : `No notes found for "${query}".`;
}

/** What a search answer says of the index, when its results may be incomplete; null once the
 * index is complete. */
export function indexStateText(indexing: IndexState | undefined): string | null {
  if (indexing === undefined || indexing.state === "ready") {
    return null;
  }
  if (indexing.state === "starting") {
    return "vaultmem is starting: the index is being checked, results may be incomplete";
  }
  const count = indexing.total !== undefined
    ? `${(indexing.done ?? 0).toLocaleString("en-US")} of ${indexing.total.toLocaleString("en-US")} notes`
    : "the vault";
  const words = indexing.by_words === "complete"
    ? "every note is searchable by its words, by meaning partly"
    : "results are partial";
  return `Indexing ${count}: ${words}`;
}

/** The modal's instructions line for the index state (none once it is complete). */
function stateInstruction(indexing: IndexState | undefined): Array<{ command: string; purpose: string }> {
  const text = indexStateText(indexing);
  return text === null ? [] : [{ command: "index", purpose: text }];
}

export function resultMeta(result: SearchResult): string {
  const kind = result.id !== null && result.score !== null
    ? `memory, score ${formatScore(result.score)}`
    : "note";
  const weak = result.matched === false ? " (weak match)" : "";
  const review = result.review ? " · due for review" : "";
  return `${kind} · relevance ${result.relevance.toFixed(2)}${weak}${review} · ${result.path}`;
}

/** "Superseded by <title>" for a memory a newer one replaces; null for a current result. */
export function supersededText(result: SearchResult): string | null {
  const successor = result.superseded_by;
  if (!successor) {
    return null;
  }
  return `Superseded by ${successor.title ?? successor.id}`;
}

export class MemorySearchModal extends SuggestModal<SearchResult> {
  private readonly searches: LatestLookup<string, SearchResult[]>;

  constructor(private readonly host: PluginHost) {
    super(host.app);
    this.limit = SEARCH_TOP_K;
    this.emptyStateText = PROMPT_TEXT;
    this.setPlaceholder("Search memories and notes…");
    this.showIndexState(undefined);
    this.scope.register(["Mod"], "Enter", (event) => {
      this.selectActiveSuggestion(event);
      return false;
    });
    this.searches = new LatestLookup((text) => this.search(text), SEARCH_DELAY_MS, []);
  }

  getSuggestions(query: string): Promise<SearchResult[]> {
    const text = query.trim();
    if (text === "") {
      this.searches.cancel();
      this.emptyStateText = PROMPT_TEXT;
      return Promise.resolve([]);
    }
    return this.searches.get(text);
  }

  private async search(text: string): Promise<SearchResult[]> {
    const matchedOnly = this.host.settings.matchedOnly;
    try {
      const response = await this.host.client().search(text, { topK: SEARCH_TOP_K, matchedOnly });
      const partial = indexStateText(response.indexing);
      this.emptyStateText = partial === null
        ? nothingFoundText(text, matchedOnly)
        : `${nothingFoundText(text, matchedOnly)} ${partial}.`;
      this.showIndexState(response.indexing);
      return response.results;
    } catch (error) {
      this.emptyStateText = describeError(error);
      return [];
    }
  }

  /** The keys, and the index's state while it is incomplete (every answer says it). */
  private showIndexState(indexing: IndexState | undefined): void {
    this.setInstructions([
      ...stateInstruction(indexing),
      { command: "↑↓", purpose: "to navigate" },
      { command: "↵", purpose: "to open" },
      { command: "mod ↵", purpose: "to open in a new tab" },
      { command: "esc", purpose: "to dismiss" },
    ]);
  }

  renderSuggestion(result: SearchResult, el: HTMLElement): void {
    el.addClass("vaultmem-result");
    el.createDiv({ cls: "vaultmem-item-title", text: result.title });
    el.createDiv({ cls: "vaultmem-item-meta", text: resultMeta(result) });
    el.createEl("small", { cls: "vaultmem-snippet", text: result.snippet });
    const superseded = supersededText(result);
    const successorPath = result.superseded_by?.path ?? null;
    if (superseded !== null) {
      const line = el.createDiv({ cls: "vaultmem-superseded" });
      if (successorPath === null) {
        line.setText(`${superseded} (no longer in the vault)`);
      } else {
        const link = line.createEl("a", { cls: "vaultmem-successor-link", text: superseded,
          attr: { href: "#", "aria-label": `Open ${successorPath}` } });
        link.addEventListener("click", (event: MouseEvent) => {
          event.preventDefault();
          event.stopPropagation();
          this.close();
          void openNote(this.app, successorPath, paneFor(event));
        });
      }
    }
  }

  onChooseSuggestion(result: SearchResult, event: MouseEvent | KeyboardEvent): void {
    void openNote(this.app, result.path, paneFor(event));
  }

  override onClose(): void {
    this.searches.cancel();
    super.onClose();
  }
}
