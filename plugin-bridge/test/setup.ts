// Obsidian plugins call timers through `window`; in Node the global object plays that part.
import { beforeEach } from "vitest";
import { Modal, Notice, Setting } from "./obsidian-mock";

if (!("window" in globalThis)) {
  Object.defineProperty(globalThis, "window", { value: globalThis, configurable: true });
}

beforeEach(() => {
  Notice.messages.length = 0;
  Notice.shown.length = 0;
  Modal.opened.length = 0;
  Setting.created.length = 0;
});
