import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AutoReinforcer } from "../src/auto-reinforce";

interface File {
  path: string;
}

const MEMORY_A = { path: "memories/a.md" };
const MEMORY_B = { path: "memories/b.md" };
const REGULAR = { path: "Home.md" };
const IDS: Record<string, string> = { "memories/a.md": "id-a", "memories/b.md": "id-b" };

function setup(options: { enabled?: boolean; seconds?: number } = {}) {
  const state = { enabled: options.enabled ?? true, seconds: options.seconds ?? 30, active: null as File | null };
  const observed: Array<[string, string[]]> = [];
  const reinforcer = new AutoReinforcer<File>({
    enabled: () => state.enabled,
    delaySeconds: () => state.seconds,
    memoryId: (file) => IDS[file.path] ?? null,
    tags: (file) => [`tag-of-${file.path}`],
    activeFile: () => state.active,
    observe: async (id, tags) => {
      observed.push([id, tags]);
    },
    timers: {
      set: (callback, ms) => setTimeout(callback, ms) as unknown as number,
      clear: (handle) => clearTimeout(handle),
    },
  });
  const open = (file: File | null): void => {
    state.active = file;
    reinforcer.onFileOpen(file);
  };
  return { state, observed, reinforcer, open };
}

describe("auto-reinforce", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("observes a memory kept open for N seconds, with the note's tags", async () => {
    const { observed, open } = setup({ seconds: 30 });
    open(MEMORY_A);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(observed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(observed).toEqual([["id-a", ["tag-of-memories/a.md"]]]);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(observed).toHaveLength(1);
  });

  it("cancels the countdown when another note is opened", async () => {
    const { observed, open, reinforcer } = setup({ seconds: 10 });
    open(MEMORY_A);
    await vi.advanceTimersByTimeAsync(5_000);
    open(REGULAR);
    expect(reinforcer.isPending).toBe(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(observed).toEqual([]);

    open(MEMORY_A);
    await vi.advanceTimersByTimeAsync(5_000);
    open(MEMORY_B);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(observed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(observed).toEqual([["id-b", ["tag-of-memories/b.md"]]]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("does nothing when turned off, or for regular notes", async () => {
    const { observed, open, state, reinforcer } = setup({ enabled: false, seconds: 1 });
    open(MEMORY_A);
    expect(reinforcer.isPending).toBe(false);
    state.enabled = true;
    open(REGULAR);
    open(null);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(observed).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("does not count a note that is no longer the active one, or a switch-off meanwhile", async () => {
    const first = setup({ seconds: 5 });
    first.open(MEMORY_A);
    first.state.active = null; // closed without another file-open
    await vi.advanceTimersByTimeAsync(5_000);
    expect(first.observed).toEqual([]);

    const second = setup({ seconds: 5 });
    second.open(MEMORY_A);
    second.state.enabled = false;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(second.observed).toEqual([]);
  });

  it("cancel() clears the pending timer", async () => {
    const { observed, open, reinforcer } = setup({ seconds: 5 });
    open(MEMORY_A);
    expect(vi.getTimerCount()).toBe(1);
    reinforcer.cancel();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(observed).toEqual([]);
  });
});
