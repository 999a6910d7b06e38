// The status bar text, as pure functions of the open note's state and the daemon's state.

import { DaemonError } from "./client";
import type { Memory, Status } from "./types";

export type NoteState =
  | { kind: "none" } // no Markdown note open
  | { kind: "regular" } // a note without stm_id
  | { kind: "memory"; memory: Pick<Memory, "status" | "score" | "decision"> }
  | { kind: "unknown" }; // a memory whose state the daemon could not tell

export type DaemonState =
  | { kind: "checking" }
  | { kind: "connected" }
  | { kind: "indexing"; done: number; total: number }
  | { kind: "unreachable" }
  | { kind: "unauthorized" }
  | { kind: "error"; message: string };

export function daemonStateFromStatus(status: Status): DaemonState {
  const indexing = status.daemon?.indexing;
  if (indexing?.running) {
    return { kind: "indexing", done: indexing.done, total: indexing.total };
  }
  return { kind: "connected" };
}

export function daemonStateFromError(error: unknown): DaemonState {
  if (error instanceof DaemonError && error.unreachable) {
    return { kind: "unreachable" };
  }
  if (error instanceof DaemonError && error.code === "unauthorized") {
    return { kind: "unauthorized" };
  }
  return { kind: "error", message: error instanceof Error ? error.message : String(error) };
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
        + (note.memory.decision === "promote" && note.memory.status === "active" ? ", ready to promote" : "");
  }
}

export function daemonText(daemon: DaemonState): string {
  switch (daemon.kind) {
    case "checking":
      return "vaultmem: connecting…";
    case "connected":
      return "vaultmem: connected";
    case "indexing":
      return `vaultmem: indexing ${daemon.done} of ${daemon.total}`;
    case "unreachable":
      return "vaultmem: unreachable";
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

/** The tooltip: the daemon's error message when there is one. */
export function statusBarTooltip(daemon: DaemonState): string {
  return daemon.kind === "error" ? daemon.message : daemonText(daemon);
}

export function formatScore(score: number): string {
  return score.toFixed(2);
}
