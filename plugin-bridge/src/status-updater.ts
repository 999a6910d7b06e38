// Keeps the status bar item in step with the open note and the daemon.

import type { TFile } from "obsidian";
import { isNotAMemory } from "./client";
import type { PluginHost } from "./host";
import { activeNote, memoryIdOf } from "./notes";
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
  private daemonRequest = 0;

  constructor(
    private readonly el: HTMLElement,
    private readonly host: Pick<PluginHost, "app" | "client">,
  ) {
    this.render();
  }

  async refresh(): Promise<void> {
    await Promise.all([this.refreshDaemon(), this.refreshNote()]);
  }

  async refreshDaemon(): Promise<void> {
    const request = ++this.daemonRequest;
    let state: DaemonState;
    try {
      state = daemonStateFromStatus(await this.host.client().status());
    } catch (error) {
      state = daemonStateFromError(error);
    }
    if (request === this.daemonRequest) {
      this.daemon = state;
      this.render();
    }
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
    try {
      return { kind: "memory", memory: await this.host.client().get(id) };
    } catch (error) {
      return isNotAMemory(error) ? { kind: "regular" } : { kind: "unknown" };
    }
  }

  private render(): void {
    this.el.setText(statusBarText(this.note, this.daemon));
    this.el.setAttr("aria-label", statusBarTooltip(this.daemon));
  }
}
