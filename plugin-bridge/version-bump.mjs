// `npm version <x.y.z> --no-git-tag-version` runs this: the manifest gets the new version, and
// versions.json maps it to the manifest's minAppVersion (Obsidian reads that map to offer older
// app versions the last release they can run).
import { readFileSync, writeFileSync } from "node:fs";

const version = process.env.npm_package_version;
if (!version) {
  console.error("run me through `npm version <x.y.z> --no-git-tag-version`");
  process.exit(1);
}
const manifest = JSON.parse(readFileSync("manifest.json", "utf8"));
manifest.version = version;
writeFileSync("manifest.json", JSON.stringify(manifest, null, 2) + "\n");
const versions = JSON.parse(readFileSync("versions.json", "utf8"));
versions[version] = manifest.minAppVersion;
writeFileSync("versions.json", JSON.stringify(versions, null, 2) + "\n");
console.log(`manifest.json and versions.json: ${version} (Obsidian ${manifest.minAppVersion} or newer)`);
