// "Search memories": live results from the daemon's hybrid search; choosing one opens the note.

import { SuggestModal } from "obsidian";
import { describeError } from "./client";
import type { PluginHost } from "./host";
import { openNote } from "./notes";
import { formatScore } from "./statusbar";
import type { SearchResult } from "./types";

export const SEARCH_TOP_K = 20;
const EMPTY_TEXT = "No matching notes.";

export function resultMeta(result: SearchResult): string {
  const kind = result.id !== null && result.score !== null
    ? `memory, score ${formatScore(result.score)}`
    : "note";
  const review = result.review ? " · due for review" : "";
  return `${kind} · relevance ${result.relevance.toFixed(2)}${review} · ${result.path}`;
}

export class MemorySearchModal extends SuggestModal<SearchResult> {
  constructor(private readonly host: PluginHost) {
    super(host.app);
    this.limit = SEARCH_TOP_K;
    this.emptyStateText = EMPTY_TEXT;
    this.setPlaceholder("Search memories and notes…");
  }

  async getSuggestions(query: string): Promise<SearchResult[]> {
    const text = query.trim();
    if (text === "") {
      return [];
    }
    try {
      const response = await this.host.client().search(text, { topK: SEARCH_TOP_K });
      this.emptyStateText = EMPTY_TEXT;
      return response.results;
    } catch (error) {
      this.emptyStateText = describeError(error);
      return [];
    }
  }

  renderSuggestion(result: SearchResult, el: HTMLElement): void {
    el.addClass("vaultmem-result");
    el.createDiv({ cls: "vaultmem-item-title", text: result.title });
    el.createDiv({ cls: "vaultmem-item-meta", text: resultMeta(result) });
    el.createEl("small", { cls: "vaultmem-snippet", text: result.snippet });
  }

  onChooseSuggestion(result: SearchResult): void {
    void openNote(this.app, result.path);
  }
}
