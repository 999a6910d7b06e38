// Does the daemon that answers serve this vault? Compared by the vault's folder, or by its name
// when the folders differ only by a link (the daemon reports the resolved path).

export interface LocalVault {
  /** The vault's name (its folder's name). */
  name: string;
  /** The vault's folder on disk, when Obsidian keeps the vault in one (desktop). */
  path: string | null;
}

function normalize(path: string): string {
  return path.replace(/\\/g, "/").replace(/\/+$/, "");
}

function baseName(path: string): string {
  return normalize(path).split("/").pop() ?? "";
}

/** True when `daemonVault` (the folder the daemon serves) is this vault. */
export function servesThisVault(local: LocalVault, daemonVault: string): boolean {
  if (local.path !== null && normalize(local.path) === normalize(daemonVault)) {
    return true;
  }
  return baseName(daemonVault) === local.name;
}

/** Where this vault is, for messages: its folder, else its name. */
export function describeLocalVault(local: LocalVault): string {
  return local.path ?? `"${local.name}"`;
}

/** A vaultmem command for this vault, ready to paste: `vaultmem token --vault "/path"`. */
export function vaultCommand(command: string, local: LocalVault): string {
  const vault = local.path === null ? "<your vault>" : `"${local.path}"`;
  return `vaultmem ${command} --vault ${vault}`;
}
