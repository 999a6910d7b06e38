// A small stand-in for the `obsidian` module (vitest aliases "obsidian" to this file): just the
// classes and functions the plugin uses, with enough behaviour to observe what it does.
// Registrations are tracked on the App so tests can check that unloading removes them all.

import { Events, FakeElement, type EventRef } from "./mock/elements";
import type { PluginSettingTab } from "./mock/ui";

export * from "./mock/elements";
export * from "./mock/ui";

// vault, metadata, workspace --------------------------------------------------------------------

export class TAbstractFile {
  constructor(public path: string) {}

  get name(): string {
    return this.path.split("/").pop() ?? this.path;
  }
}

export class TFile extends TAbstractFile {
  get extension(): string {
    const dot = this.name.lastIndexOf(".");
    return dot < 0 ? "" : this.name.slice(dot + 1);
  }

  get basename(): string {
    const dot = this.name.lastIndexOf(".");
    return dot < 0 ? this.name : this.name.slice(0, dot);
  }
}

export class FileSystemAdapter {
  constructor(private readonly basePath: string) {}

  getBasePath(): string {
    return this.basePath;
  }
}

export class Vault extends Events {
  readonly files = new Map<string, TFile>();
  /** Test knob: where this vault is on disk (the sample vault's daemon reports "/v"). */
  adapter: FileSystemAdapter | object = new FileSystemAdapter("/home/sam/vault");

  getName(): string {
    return "vault";
  }

  getAbstractFileByPath(path: string): TAbstractFile | null {
    return this.files.get(path) ?? null;
  }
}

export interface CachedMetadata {
  frontmatter?: Record<string, unknown>;
  tags?: Array<{ tag: string }>;
}

export class MetadataCache extends Events {
  readonly caches = new Map<string, CachedMetadata>();

  getFileCache(file: TFile): CachedMetadata | null {
    return this.caches.get(file.path) ?? null;
  }
}

/** Like Obsidian's: frontmatter tags get a `#`, inline tags already have one. */
export function getAllTags(cache: CachedMetadata): string[] | null {
  const raw = cache.frontmatter?.["tags"];
  const front = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? raw.split(/[,\s]+/) : [];
  const tags = [...front.filter((tag) => tag !== "").map((tag) => `#${tag}`),
    ...(cache.tags ?? []).map((ref) => ref.tag)];
  return tags.length > 0 ? tags : null;
}

export class WorkspaceLeaf {
  view: View | null = null;
  opened: TFile[] = [];

  constructor(readonly app: App) {}

  async openFile(file: TFile): Promise<void> {
    this.opened.push(file);
    this.app.workspace.openFileForTest(file);
  }

  async setViewState(state: { type: string; active?: boolean }): Promise<void> {
    const factory = this.app.viewFactories.get(state.type);
    if (factory === undefined) {
      throw new Error(`no view registered for ${state.type}`);
    }
    this.view = factory(this);
    this.app.workspace.leaves.push(this);
    this.view.load();
    await this.view.onOpen();
  }

  getViewState(): { type: string } {
    return { type: this.view?.getViewType() ?? "empty" };
  }

  detach(): void {
    this.view?.unload();
    this.app.workspace.leaves = this.app.workspace.leaves.filter((leaf) => leaf !== this);
  }
}

export class Workspace extends Events {
  leaves: WorkspaceLeaf[] = [];
  revealed: WorkspaceLeaf[] = [];
  private activeFile: TFile | null = null;
  private readonly mainLeaf: WorkspaceLeaf;
  private readonly layoutCallbacks: Array<() => unknown> = [];
  layoutReady = false;

  constructor(readonly app: App) {
    super();
    this.mainLeaf = new WorkspaceLeaf(app);
  }

  getActiveFile(): TFile | null {
    return this.activeFile;
  }

  /** Leaves opened by `getLeaf("tab")` / `getLeaf(true)`, newest last. */
  readonly newLeaves: WorkspaceLeaf[] = [];

  getLeaf(newLeaf?: boolean | string): WorkspaceLeaf {
    if (newLeaf === undefined || newLeaf === false) {
      return this.mainLeaf;
    }
    const leaf = new WorkspaceLeaf(this.app);
    this.newLeaves.push(leaf);
    return leaf;
  }

  getLeavesOfType(type: string): WorkspaceLeaf[] {
    return this.leaves.filter((leaf) => leaf.view?.getViewType() === type);
  }

  getRightLeaf(_split: boolean): WorkspaceLeaf {
    return new WorkspaceLeaf(this.app);
  }

  async revealLeaf(leaf: WorkspaceLeaf): Promise<void> {
    this.revealed.push(leaf);
  }

  onLayoutReady(callback: () => unknown): void {
    if (this.layoutReady) {
      callback();
    } else {
      this.layoutCallbacks.push(callback);
    }
  }

  /** Test helper: the layout is ready; run the waiting callbacks. */
  setLayoutReady(): void {
    this.layoutReady = true;
    this.layoutCallbacks.splice(0).forEach((callback) => callback());
  }

  /** Test helper: make `file` the active note and fire `file-open`, as Obsidian does. */
  openFileForTest(file: TFile | null): void {
    this.activeFile = file;
    this.trigger("file-open", file);
  }
}

/** Like Obsidian's: Ctrl (Cmd on macOS) opens a new tab. */
export class Keymap {
  static isModEvent(evt?: { ctrlKey?: boolean; metaKey?: boolean } | null): string | boolean {
    return evt?.ctrlKey === true || evt?.metaKey === true ? "tab" : false;
  }
}

export interface Command {
  id: string;
  name: string;
  callback?: () => unknown;
  checkCallback?: (checking: boolean) => boolean | void;
}

export class App {
  readonly vault = new Vault();
  readonly metadataCache = new MetadataCache();
  readonly workspace: Workspace;
  readonly commands = new Map<string, Command>();
  readonly viewFactories = new Map<string, (leaf: WorkspaceLeaf) => View>();
  readonly statusBarItems: FakeElement[] = [];
  readonly settingTabs: PluginSettingTab[] = [];
  readonly ribbonIcons: FakeElement[] = [];
  readonly hoverSources = new Map<string, { display: string; defaultMod: boolean }>();

  constructor() {
    this.workspace = new Workspace(this);
  }

  /** Test helper: a note in the vault, with optional frontmatter and inline tags. */
  addNote(path: string, frontmatter?: Record<string, unknown>, inlineTags: string[] = []): TFile {
    const file = new TFile(path);
    this.vault.files.set(path, file);
    const cache: CachedMetadata = { tags: inlineTags.map((tag) => ({ tag: `#${tag}` })) };
    if (frontmatter !== undefined) {
      cache.frontmatter = frontmatter;
    }
    this.metadataCache.caches.set(path, cache);
    return file;
  }
}

// components ---------------------------------------------------------------------------------

export class Component {
  private cleanups: Array<() => unknown> = [];
  private children: Component[] = [];
  loaded = false;

  load(): void {
    this.loaded = true;
    void this.onload();
  }

  onload(): void | Promise<void> {}

  onunload(): void {}

  unload(): void {
    for (const child of this.children.splice(0)) {
      child.unload();
    }
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      cleanup();
    }
    this.onunload();
    this.loaded = false;
  }

  addChild<T extends Component>(child: T): T {
    this.children.push(child);
    child.load();
    return child;
  }

  register(cleanup: () => unknown): void {
    this.cleanups.push(cleanup);
  }

  registerEvent(ref: EventRef): void {
    this.register(() => ref.owner.offref(ref));
  }

  registerDomEvent(el: FakeElement, type: string, callback: (event: unknown) => unknown): void {
    el.addEventListener(type, callback);
  }

  registerInterval(id: number): number {
    this.register(() => clearInterval(id));
    return id;
  }

  get cleanupCount(): number {
    return this.cleanups.length;
  }
}

export interface PluginManifest {
  id: string;
  name: string;
  version: string;
  minAppVersion: string;
  description: string;
  author: string;
  isDesktopOnly?: boolean;
}

export class Plugin extends Component {
  settings?: unknown;
  data: unknown = null;
  savedData: unknown[] = [];

  constructor(readonly app: App, readonly manifest: PluginManifest) {
    super();
  }

  addCommand(command: Command): Command {
    const full = { ...command, id: `${this.manifest.id}:${command.id}` };
    this.app.commands.set(full.id, full);
    this.register(() => this.app.commands.delete(full.id));
    return full;
  }

  registerHoverLinkSource(id: string, info: { display: string; defaultMod: boolean }): void {
    this.app.hoverSources.set(id, info);
    this.register(() => this.app.hoverSources.delete(id));
  }

  registerView(type: string, factory: (leaf: WorkspaceLeaf) => View): void {
    this.app.viewFactories.set(type, factory);
    this.register(() => this.app.viewFactories.delete(type));
  }

  addStatusBarItem(): FakeElement {
    const el = new FakeElement("div");
    this.app.statusBarItems.push(el);
    this.register(() => this.app.statusBarItems.splice(this.app.statusBarItems.indexOf(el), 1));
    return el;
  }

  addSettingTab(tab: PluginSettingTab): void {
    this.app.settingTabs.push(tab);
    this.register(() => this.app.settingTabs.splice(this.app.settingTabs.indexOf(tab), 1));
  }

  addRibbonIcon(_icon: string, title: string, callback: (event: unknown) => unknown): FakeElement {
    const el = new FakeElement("div");
    el.setAttr("aria-label", title);
    el.addEventListener("click", callback);
    this.app.ribbonIcons.push(el);
    this.register(() => this.app.ribbonIcons.splice(this.app.ribbonIcons.indexOf(el), 1));
    return el;
  }

  async loadData(): Promise<unknown> {
    return this.data;
  }

  async saveData(data: unknown): Promise<void> {
    this.data = structuredClone(data);
    this.savedData.push(this.data);
  }
}

export abstract class View extends Component {
  readonly app: App;
  readonly containerEl = new FakeElement("div");
  readonly actions: Array<{ icon: string; title: string; callback: (event: unknown) => unknown }> = [];

  constructor(readonly leaf: WorkspaceLeaf) {
    super();
    this.app = leaf.app;
  }

  abstract getViewType(): string;
  abstract getDisplayText(): string;

  getIcon(): string {
    return "document";
  }

  async onOpen(): Promise<void> {}

  async onClose(): Promise<void> {}
}

export abstract class ItemView extends View {
  readonly contentEl = new FakeElement("div");

  addAction(icon: string, title: string, callback: (event: unknown) => unknown): FakeElement {
    this.actions.push({ icon, title, callback });
    return new FakeElement("button");
  }
}

// network ------------------------------------------------------------------------------------

export interface RequestUrlParam {
  url: string;
  method?: string;
  contentType?: string;
  body?: string | ArrayBuffer;
  headers?: Record<string, string>;
  throw?: boolean;
}

export interface RequestUrlResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
}

type RequestHandler = (request: RequestUrlParam) => Promise<RequestUrlResponse>;

let requestHandler: RequestHandler = () => Promise.reject(new Error("requestUrl: no handler set in the test"));

/** Test helper: what `requestUrl` answers. */
export function setRequestUrlHandler(handler: RequestHandler): void {
  requestHandler = handler;
}

export function requestUrl(request: RequestUrlParam): Promise<RequestUrlResponse> {
  return requestHandler(request);
}
