// Optional reinforcement while reading: a memory note that stays open for N seconds counts as
// an observed use, with the note's tags as context. Switching notes cancels the pending timer.

export interface Timers {
  set(callback: () => void, ms: number): number;
  clear(handle: number): void;
}

export interface AutoReinforceDeps<F extends { path: string }> {
  enabled(): boolean;
  delaySeconds(): number;
  memoryId(file: F): string | null;
  tags(file: F): string[];
  activeFile(): F | null;
  observe(id: string, contextTags: string[]): Promise<void>;
  timers: Timers;
}

export class AutoReinforcer<F extends { path: string }> {
  private pending: number | null = null;

  constructor(private readonly deps: AutoReinforceDeps<F>) {}

  /** Call on every `file-open`: restarts the countdown for a memory note, or just cancels. */
  onFileOpen(file: F | null): void {
    this.cancel();
    if (file === null || !this.deps.enabled()) {
      return;
    }
    const id = this.deps.memoryId(file);
    if (id === null) {
      return;
    }
    const path = file.path;
    this.pending = this.deps.timers.set(() => this.fire(path, id), this.deps.delaySeconds() * 1000);
  }

  get isPending(): boolean {
    return this.pending !== null;
  }

  cancel(): void {
    if (this.pending !== null) {
      this.deps.timers.clear(this.pending);
      this.pending = null;
    }
  }

  private fire(path: string, id: string): void {
    this.pending = null;
    const active = this.deps.activeFile();
    if (active === null || active.path !== path || !this.deps.enabled()) {
      return;
    }
    void this.deps.observe(id, this.deps.tags(active));
  }
}
