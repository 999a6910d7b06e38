// Every notice the plugin shows starts with its name, so the user knows where it came from.

import { Notice } from "obsidian";

export const NOTICE_PREFIX = "vaultmem: ";

/** Shows `message` as a notice; `durationMs` 0 keeps it until hidden. */
export function notify(message: string, durationMs?: number): Notice {
  return new Notice(NOTICE_PREFIX + message, durationMs);
}
