// The bundle as Obsidian loads it: one CommonJS file whose only import is `obsidian`, with the
// plugin class as its default export.

import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import * as obsidian from "./obsidian-mock";
import { App, type Plugin } from "./obsidian-mock";

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: ["src/main.ts"],
    bundle: true,
    format: "cjs",
    platform: "browser",
    target: "es2022",
    external: ["obsidian", "electron", "@codemirror/*", "@lezer/*"],
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

describe("main.js bundle", () => {
  it("requires nothing but obsidian and exports the plugin class", async () => {
    const code = await bundle();
    const required = [...code.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]);
    expect(new Set(required)).toEqual(new Set(["obsidian"]));

    const module = { exports: {} as Record<string, unknown> };
    const load = new Function("module", "exports", "require", code) as
      (m: typeof module, e: unknown, r: (name: string) => unknown) => void;
    load(module, module.exports, (name) => {
      if (name !== "obsidian") {
        throw new Error(`unexpected require(${name})`);
      }
      return obsidian;
    });
    const PluginClass = module.exports["default"] as new (app: App, manifest: unknown) => Plugin;
    const app = new App();
    const plugin = new PluginClass(app, { id: "vaultmem-bridge" });
    plugin.load();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(app.commands.size).toBe(8);
    plugin.unload();
    expect(app.commands.size).toBe(0);
  });
});
