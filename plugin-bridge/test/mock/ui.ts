// Part of the `obsidian` stand-in (see ../obsidian-mock.ts): modals, notices, settings.

import type { App, Plugin } from "../obsidian-mock";
import { FakeElement } from "./elements";

// modals, notices, settings --------------------------------------------------------------------

export class Scope {
  readonly keys: Array<{ modifiers: string[] | null; key: string | null; func: (event: unknown) => unknown }> = [];

  register(modifiers: string[] | null, key: string | null, func: (event: unknown) => unknown): object {
    const handler = { modifiers, key, func };
    this.keys.push(handler);
    return handler;
  }

  /** Test helper: the handler for this key with these modifiers, called as Obsidian would. */
  press(modifiers: string[], key: string, event: unknown = { type: "keydown", key }): unknown {
    const handler = this.keys.find((h) => h.key === key && JSON.stringify(h.modifiers) === JSON.stringify(modifiers));
    if (handler === undefined) {
      throw new Error(`no handler for ${modifiers.join("+")}+${key}`);
    }
    return handler.func(event);
  }
}

export class Modal {
  static opened: Modal[] = [];
  readonly contentEl = new FakeElement("div");
  readonly titleEl = new FakeElement("div");
  readonly scope = new Scope();
  isOpen = false;

  constructor(readonly app: App) {}

  open(): void {
    this.isOpen = true;
    Modal.opened.push(this);
    this.onOpen();
  }

  close(): void {
    this.isOpen = false;
    this.onClose();
  }

  onOpen(): void {}

  onClose(): void {}
}

export abstract class SuggestModal<T> extends Modal {
  limit = 100;
  emptyStateText = "No results found.";
  placeholder = "";
  instructions: Array<{ command: string; purpose: string }> = [];
  readonly inputEl = new FakeElement("input");
  readonly resultContainerEl = new FakeElement("div");
  /** Test knob: the suggestion `selectActiveSuggestion` picks. */
  activeSuggestion: T | null = null;

  setPlaceholder(placeholder: string): void {
    this.placeholder = placeholder;
  }

  setInstructions(instructions: Array<{ command: string; purpose: string }>): void {
    this.instructions = instructions;
  }

  selectActiveSuggestion(evt: unknown): void {
    if (this.activeSuggestion !== null) {
      this.close();
      this.onChooseSuggestion(this.activeSuggestion, evt);
    }
  }

  abstract getSuggestions(query: string): T[] | Promise<T[]>;
  abstract renderSuggestion(value: T, el: FakeElement): void;
  abstract onChooseSuggestion(item: T, evt: unknown): void;
}

export class Notice {
  static messages: string[] = [];
  static shown: Notice[] = [];
  hidden = false;

  constructor(readonly message: string, readonly duration?: number) {
    Notice.messages.push(message);
    Notice.shown.push(this);
  }

  hide(): void {
    this.hidden = true;
  }
}

export class TextComponent {
  readonly inputEl = new FakeElement("input");
  placeholder = "";
  private changed: ((value: string) => unknown) | null = null;

  setPlaceholder(placeholder: string): this {
    this.placeholder = placeholder;
    return this;
  }

  setValue(value: string): this {
    this.inputEl.value = value;
    return this;
  }

  getValue(): string {
    return this.inputEl.value;
  }

  onChange(callback: (value: string) => unknown): this {
    this.changed = callback;
    return this;
  }

  /** Test helper: the user types `value`. */
  async type(value: string): Promise<void> {
    this.inputEl.value = value;
    await this.changed?.(value);
  }
}

export class ToggleComponent {
  value = false;
  private changed: ((value: boolean) => unknown) | null = null;

  setValue(value: boolean): this {
    this.value = value;
    return this;
  }

  getValue(): boolean {
    return this.value;
  }

  onChange(callback: (value: boolean) => unknown): this {
    this.changed = callback;
    return this;
  }

  async toggle(value: boolean): Promise<void> {
    this.value = value;
    await this.changed?.(value);
  }
}

export class ButtonComponent {
  text = "";
  disabled = false;
  cta = false;
  private clicked: ((event: unknown) => unknown) | null = null;

  setButtonText(text: string): this {
    this.text = text;
    return this;
  }

  setDisabled(disabled: boolean): this {
    this.disabled = disabled;
    return this;
  }

  setCta(): this {
    this.cta = true;
    return this;
  }

  onClick(callback: (event: unknown) => unknown): this {
    this.clicked = callback;
    return this;
  }

  async press(): Promise<void> {
    await this.clicked?.({ type: "click" });
  }
}

export class Setting {
  static created: Setting[] = [];
  name = "";
  desc = "";
  readonly texts: TextComponent[] = [];
  readonly toggles: ToggleComponent[] = [];
  readonly buttons: ButtonComponent[] = [];
  readonly settingEl: FakeElement;

  constructor(containerEl: FakeElement) {
    this.settingEl = containerEl.createDiv({ cls: "setting-item" });
    Setting.created.push(this);
  }

  setName(name: string): this {
    this.name = name;
    return this;
  }

  setDesc(desc: string): this {
    this.desc = desc;
    return this;
  }

  addText(callback: (text: TextComponent) => unknown): this {
    const text = new TextComponent();
    this.texts.push(text);
    callback(text);
    return this;
  }

  addToggle(callback: (toggle: ToggleComponent) => unknown): this {
    const toggle = new ToggleComponent();
    this.toggles.push(toggle);
    callback(toggle);
    return this;
  }

  addButton(callback: (button: ButtonComponent) => unknown): this {
    const button = new ButtonComponent();
    this.buttons.push(button);
    callback(button);
    return this;
  }
}

export abstract class PluginSettingTab {
  readonly containerEl = new FakeElement("div");

  constructor(readonly app: App, readonly plugin: Plugin) {}

  abstract display(): void;

  hide(): void {
    this.containerEl.empty();
  }
}
