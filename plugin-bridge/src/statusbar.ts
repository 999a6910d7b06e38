// The status bar text, as pure functions of the open note's state and the daemon's state.

import { DaemonError, describeError, NO_TOKEN, TIMEOUT } from "./client";
import type { IndexingProgress, Memory, Status } from "./types";
import { describeLocalVault, servesThisVault, type LocalVault } from "./vault-check";

export type NoteState =
  | { kind: "none" } // no Markdown note open
  | { kind: "regular" } // a note without stm_id
  | { kind: "memory"; memory: Pick<Memory, "status" | "score" | "decision"> & Pick<Partial<Memory>, "superseded_by"> }
  | { kind: "unknown" }; // a memory whose state the daemon could not tell

export type DaemonState =
  | { kind: "checking" }
  | { kind: "connected"; copies?: number } // copies: sync conflict copies of memories
  | { kind: "indexing"; done: number; total: number }
  | { kind: "no-token" }
  | { kind: "other-vault"; message: string }
  | { kind: "unreachable"; message: string }
  | { kind: "not-responding"; message: string }
  | { kind: "unauthorized"; message: string }
  | { kind: "error"; message: string };

/** The daemon's state from its status; a daemon serving another vault is reported as such. */
export function daemonStateFromStatus(status: Status, local?: LocalVault): DaemonState {
  if (local !== undefined && !servesThisVault(local, status.vault)) {
    return { kind: "other-vault", message: otherVaultMessage(status.vault, local, status.daemon?.url ?? null) };
  }
  const indexing = status.daemon?.indexing;
  if (indexing?.running && isBuilding(indexing)) {
    return { kind: "indexing", done: indexing.done, total: indexing.total };
  }
  const copies = (status.sync?.duplicates ?? []).reduce((n, group) => n + group.copies.length, 0);
  return copies > 0 ? { kind: "connected", copies } : { kind: "connected" };
}

/** The index itself is being built (the first index, a rebuild): searches are partial. A
 * batch of edits being indexed is not that. A daemon that does not say the kind builds only. */
function isBuilding(indexing: IndexingProgress): boolean {
  return indexing.kind === undefined || indexing.kind === null
    || (indexing.kind !== "changes" && indexing.total > 0);
}

function copiesText(copies: number): string {
  return `${copies} sync conflict ${copies === 1 ? "copy" : "copies"}`;
}

export function otherVaultMessage(daemonVault: string, local: LocalVault, url: string | null): string {
  const where = url === null ? "the daemon" : `the daemon at ${url}`;
  return `${where} serves another vault (${daemonVault}), not this one (${describeLocalVault(local)}): `
    + "start one for this vault (`vaultmem run --vault <this vault>`, on another port if both run) "
    + "and set its address in the vaultmem plugin settings";
}

export function daemonStateFromError(error: unknown): DaemonState {
  const message = describeError(error);
  if (!(error instanceof DaemonError)) {
    return { kind: "error", message };
  }
  if (error.unreachable) {
    return { kind: "unreachable", message };
  }
  switch (error.code) {
    case NO_TOKEN:
      return { kind: "no-token" };
    case TIMEOUT:
      return { kind: "not-responding", message };
    case "unauthorized":
      return { kind: "unauthorized", message };
    default:
      return { kind: "error", message };
  }
}

export function noteText(note: NoteState): string {
  switch (note.kind) {
    case "none":
    case "unknown":
      return "";
    case "regular":
      return "not a memory";
    case "memory":
      return `memory: ${note.memory.status}, score ${formatScore(note.memory.score)}`
        + (note.memory.decision === "promote" && note.memory.status === "active" ? ", ready to promote" : "")
        + (note.memory.superseded_by ? ", superseded by a newer memory" : "");
  }
}

export function daemonText(daemon: DaemonState): string {
  switch (daemon.kind) {
    case "checking":
      return "vaultmem: connecting…";
    case "connected":
      return daemon.copies ? `vaultmem: connected, ${copiesText(daemon.copies)}` : "vaultmem: connected";
    case "indexing":
      return `vaultmem: index building, ${count(daemon.done)} of ${count(daemon.total)} notes`;
    case "no-token":
      return "vaultmem: token needed";
    case "other-vault":
      return "vaultmem: serves another vault";
    case "unreachable":
      return "vaultmem: unreachable";
    case "not-responding":
      return "vaultmem: not responding";
    case "unauthorized":
      return "vaultmem: token rejected";
    case "error":
      return "vaultmem: error";
  }
}

/** The whole status bar item: the note's state (if any), then the daemon's. */
export function statusBarText(note: NoteState, daemon: DaemonState): string {
  return [noteText(note), daemonText(daemon)].filter((part) => part !== "").join(" · ");
}

export const NO_TOKEN_HINT = "paste the daemon's token in the vaultmem plugin settings "
  + "(`vaultmem token --vault <your vault>` prints it)";

/** The tooltip: what is wrong and what to do, and that a click opens the settings. */
export function statusBarTooltip(daemon: DaemonState): string {
  const detail = daemon.kind === "no-token" ? `No token yet: ${NO_TOKEN_HINT}`
    : daemon.kind === "connected" && daemon.copies ? `${copiesText(daemon.copies)} of memory `
      + "notes: uses go to the original notes, and the daemon merges the copies into them and "
      + "archives them every few minutes (`vaultmem status` lists them, `vaultmem reconcile "
      + "--apply` merges them now)"
    : daemon.kind === "indexing" ? `${daemonText(daemon)}: search results are partial until `
      + "the index is built"
    : "message" in daemon ? daemon.message : daemonText(daemon);
  return `${detail}. Click to open the vaultmem settings.`;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}

export function formatScore(score: number): string {
  return score.toFixed(2);
}
