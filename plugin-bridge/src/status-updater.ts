// Keeps the status bar item in step with the open note and the daemon. At most one status
// request is in flight: a poll that finds one pending waits for it instead of starting another,
// and after a timeout no new request is sent until the abandoned one has ended (a stuck daemon
// is not sent a new request every poll) or the address or token changes.

import type { TFile } from "obsidian";
import { DaemonError, isNotAMemory, TIMEOUT } from "./client";
import type { PluginHost } from "./host";
import { activeNote, localVault, memoryIdOf } from "./notes";
import {
  daemonStateFromError,
  daemonStateFromStatus,
  statusBarText,
  statusBarTooltip,
  type DaemonState,
  type NoteState,
} from "./statusbar";

export class StatusUpdater {
  private note: NoteState = { kind: "none" };
  private daemon: DaemonState = { kind: "checking" };
  private noteRequest = 0;
  private daemonPoll: Promise<void> | null = null;
  /** The settings changed while a poll was pending: its answer is stale, poll again. */
  private stale = false;
  /** A status request that timed out and has not ended yet. */
  private abandoned: Promise<void> | null = null;

  constructor(
    private readonly el: HTMLElement,
    private readonly host: Pick<PluginHost, "app" | "client">,
  ) {
    this.render();
  }

  get daemonState(): DaemonState {
    return this.daemon;
  }

  get polling(): boolean {
    return this.daemonPoll !== null;
  }

  async refresh(): Promise<void> {
    await Promise.all([this.refreshDaemon(), this.refreshNote()]);
  }

  /**
   * Asks the daemon for its state, unless a request is already pending (then waits for that
   * one). With `settingsChanged`, a pending answer is dropped and the daemon is asked again.
   */
  refreshDaemon(settingsChanged = false): Promise<void> {
    if (this.daemonPoll !== null) {
      this.stale ||= settingsChanged;
      return this.daemonPoll;
    }
    if (this.abandoned !== null && !settingsChanged) {
      return Promise.resolve();
    }
    this.abandoned = null;
    this.daemonPoll = this.pollUntilFresh().finally(() => {
      this.daemonPoll = null;
    });
    return this.daemonPoll;
  }

  private async pollUntilFresh(): Promise<void> {
    do {
      this.stale = false;
      const state = await this.fetchDaemonState();
      if (!this.stale) {
        this.daemon = state;
        this.render();
      }
    } while (this.stale);
  }

  private async fetchDaemonState(): Promise<DaemonState> {
    try {
      return daemonStateFromStatus(await this.host.client().status(), localVault(this.host.app));
    } catch (error) {
      if (error instanceof DaemonError && error.code === TIMEOUT && error.settled !== null) {
        this.waitFor(error.settled);
      }
      return daemonStateFromError(error);
    }
  }

  private waitFor(settled: Promise<void>): void {
    this.abandoned = settled;
    void settled.then(() => {
      if (this.abandoned === settled) {
        this.abandoned = null;
      }
    });
  }

  /** The active note's memory status; a later call wins over a slower earlier one. */
  async refreshNote(): Promise<void> {
    const request = ++this.noteRequest;
    const state = await this.noteState(activeNote(this.host.app));
    if (request === this.noteRequest) {
      this.note = state;
      this.render();
    }
  }

  private async noteState(file: TFile | null): Promise<NoteState> {
    if (file === null) {
      return { kind: "none" };
    }
    const id = memoryIdOf(this.host.app, file);
    if (id === null) {
      return { kind: "regular" };
    }
    const client = this.host.client();
    if (!client.hasToken || this.abandoned !== null) {
      return { kind: "unknown" }; // nothing to ask with, or a stuck daemon that is not asked more
    }
    try {
      return { kind: "memory", memory: await client.get(id) };
    } catch (error) {
      return isNotAMemory(error) ? { kind: "regular" } : { kind: "unknown" };
    }
  }

  private render(): void {
    this.el.setText(statusBarText(this.note, this.daemon));
    this.el.setAttr("aria-label", statusBarTooltip(this.daemon));
  }
}
