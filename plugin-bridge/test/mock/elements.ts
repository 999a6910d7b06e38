// Part of the `obsidian` stand-in (see ../obsidian-mock.ts): events and a minimal element.

export interface EventRef {
  owner: Events;
  name: string;
  callback: (...args: any[]) => unknown;
}

export class Events {
  private refs: EventRef[] = [];

  on(name: string, callback: (...args: any[]) => unknown): EventRef {
    const ref = { owner: this, name, callback };
    this.refs.push(ref);
    return ref;
  }

  offref(ref: EventRef): void {
    this.refs = this.refs.filter((other) => other !== ref);
  }

  trigger(name: string, ...args: unknown[]): void {
    for (const ref of this.refs.filter((other) => other.name === name)) {
      ref.callback(...args);
    }
  }

  listenerCount(name?: string): number {
    return this.refs.filter((ref) => name === undefined || ref.name === name).length;
  }
}

// elements -------------------------------------------------------------------------------------

interface ElOptions {
  cls?: string;
  text?: string;
  attr?: Record<string, string>;
}

export class FakeElement {
  readonly tagName: string;
  readonly classes = new Set<string>();
  readonly attrs = new Map<string, string>();
  readonly children: FakeElement[] = [];
  private readonly listeners = new Map<string, Array<(event: unknown) => unknown>>();
  private ownText = "";
  type = "text";
  value = "";
  /** Test knob: whether the element is on screen (`isShown()`). */
  shown = true;
  /** The element that has the focus, across all fake elements. */
  static focused: FakeElement | null = null;

  constructor(tagName = "div") {
    this.tagName = tagName;
  }

  createEl(tagName: string, options: ElOptions | string = {}): FakeElement {
    const child = new FakeElement(tagName);
    const opts = typeof options === "string" ? { cls: options } : options;
    if (opts.cls) {
      opts.cls.split(/\s+/).forEach((cls) => child.classes.add(cls));
    }
    if (opts.text !== undefined) {
      child.ownText = opts.text;
    }
    for (const [key, value] of Object.entries(opts.attr ?? {})) {
      child.attrs.set(key, value);
    }
    this.children.push(child);
    return child;
  }

  createDiv(options: ElOptions | string = {}): FakeElement {
    return this.createEl("div", options);
  }

  createSpan(options: ElOptions | string = {}): FakeElement {
    return this.createEl("span", options);
  }

  empty(): void {
    this.children.length = 0;
    this.ownText = "";
  }

  setText(text: string): void {
    this.children.length = 0;
    this.ownText = text;
  }

  addClass(...classes: string[]): void {
    classes.forEach((cls) => this.classes.add(cls));
  }

  removeClass(...classes: string[]): void {
    classes.forEach((cls) => this.classes.delete(cls));
  }

  toggleClass(cls: string, on: boolean): void {
    if (on) {
      this.classes.add(cls);
    } else {
      this.classes.delete(cls);
    }
  }

  hasClass(cls: string): boolean {
    return this.classes.has(cls);
  }

  setAttr(name: string, value: string): void {
    this.attrs.set(name, value);
  }

  getAttr(name: string): string | null {
    return this.attrs.get(name) ?? null;
  }

  addEventListener(type: string, listener: (event: unknown) => unknown): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  click(modifiers: { ctrlKey?: boolean; metaKey?: boolean } = {}): void {
    this.dispatch("click", { type: "click", button: 0, ...modifiers });
  }

  /** Test helper: a key press on this element; the event records `preventDefault()`. */
  press(key: string, modifiers: { ctrlKey?: boolean; metaKey?: boolean } = {}): { defaultPrevented: boolean } {
    const event = { type: "keydown", key, ...modifiers, defaultPrevented: false,
      preventDefault(): void {
        event.defaultPrevented = true;
      } };
    this.dispatch("keydown", event);
    return event;
  }

  /** Calls this element's listeners for `type` with `event`. */
  dispatch(type: string, event: object): void {
    for (const listener of this.listeners.get(type) ?? []) {
      listener(event);
    }
  }

  listenerCount(type: string): number {
    return this.listeners.get(type)?.length ?? 0;
  }

  focus(): void {
    FakeElement.focused = this;
  }

  isShown(): boolean {
    return this.shown;
  }

  get textContent(): string {
    return this.ownText + this.children.map((child) => child.textContent).join("");
  }

  /** Every descendant with this class, in document order. */
  findAll(cls: string): FakeElement[] {
    return this.children.flatMap((child) => [...(child.hasClass(cls) ? [child] : []), ...child.findAll(cls)]);
  }

  find(cls: string): FakeElement | undefined {
    return this.findAll(cls)[0];
  }
}
