// What a release needs and the manifests must agree on: the licence (MIT, as in the repository's
// LICENSE), the author, the version, and the Obsidian version the plugin needs.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string): string => readFileSync(new URL(path, import.meta.url), "utf-8");
const json = (path: string): Record<string, unknown> => JSON.parse(read(path)) as Record<string, unknown>;

const manifest = json("../manifest.json");
const pkg = json("../package.json");
const versions = json("../versions.json");
const license = read("../../LICENSE");
const pyproject = read("../../pyproject.toml");

describe("licence and manifests", () => {
  it("the repository's LICENSE is the MIT licence of the vaultmem authors", () => {
    expect(license.split("\n")[0]).toBe("MIT License");
    expect(license).toMatch(/^Copyright \(c\) \d{4} the vaultmem authors$/m);
    expect(license).toContain("Permission is hereby granted, free of charge");
  });

  it("pyproject.toml and package.json state that licence; all three name the same author", () => {
    expect(pyproject).toMatch(/^license = "MIT"$/m);
    expect(pyproject).toMatch(/^license-files = \["LICENSE"\]$/m);
    expect(pyproject).toMatch(/^authors = \[\{ name = "the vaultmem authors" \}\]$/m);
    expect(pkg["license"]).toBe("MIT");
    expect(pkg["author"]).toBe("the vaultmem authors");
    expect(manifest["author"]).toBe("the vaultmem authors");
  });

  it("the versions agree, and versions.json maps this version to the manifest's minAppVersion", () => {
    expect(manifest["version"]).toBe(pkg["version"]);
    expect(versions[String(manifest["version"])]).toBe(manifest["minAppVersion"]);
    expect((pkg["scripts"] as Record<string, string>)["version"]).toBe("node version-bump.mjs");
  });

  it("the manifest has only the keys Obsidian accepts, and says desktop only", () => {
    const allowed = ["id", "name", "version", "minAppVersion", "description", "author", "authorUrl",
      "fundingUrl", "isDesktopOnly"];
    expect(Object.keys(manifest).filter((key) => !allowed.includes(key))).toEqual([]);
    expect(manifest["isDesktopOnly"]).toBe(true);
    expect(String(manifest["description"])).not.toMatch(/obsidian|plugin/i);
  });

  it("npm test runs Obsidian's recommended lint with no warning allowed", () => {
    const scripts = pkg["scripts"] as Record<string, string>;
    expect(scripts["test"]).toMatch(/^npm run lint && /);
    expect(scripts["lint"]).toBe("eslint --max-warnings=0 src package.json");
    const config = read("../eslint.config.mjs");
    expect(config).toContain("...obsidianmd.configs.recommended");
    expect(config).not.toMatch(/rules\s*:/); // the recommended rules as published, none turned off
  });
});
