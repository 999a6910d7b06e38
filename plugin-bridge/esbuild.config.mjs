// Bundles src/main.ts into main.js, the file Obsidian loads (CommonJS, one file).
// `node esbuild.config.mjs` builds once; `--watch` rebuilds on change.
import { builtinModules } from "node:module";
import esbuild from "esbuild";

const watch = process.argv.includes("--watch");

const context = await esbuild.context({
  entryPoints: ["src/main.ts"],
  outfile: "main.js",
  bundle: true,
  format: "cjs",
  platform: "browser",
  target: "es2022",
  external: ["obsidian", "electron", "@codemirror/*", "@lezer/*", ...builtinModules],
  sourcemap: watch ? "inline" : false,
  minify: false,
  treeShaking: true,
  logLevel: "info",
});

if (watch) {
  await context.watch();
} else {
  await context.rebuild();
  await context.dispose();
}
