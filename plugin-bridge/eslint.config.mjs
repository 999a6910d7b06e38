// Obsidian's official lint rules (eslint-plugin-obsidianmd, recommended config) over the plugin's
// sources. `npm test` runs it (`npm run lint`); it must report no errors and no warnings.
import { defineConfig } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";

export default defineConfig([
  { ignores: ["main.js", "node_modules/**", "test/**", "vitest.config.ts", "esbuild.config.mjs"] },
  ...obsidianmd.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
]);
