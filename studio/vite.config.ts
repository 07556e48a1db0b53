// The studio's build: a single-page app served by the service at /studio/, built to studio/dist.
// No inline script reaches index.html (the CSP is script-src 'self'), and the editors the form
// layer loads lazily (CodeMirror, TipTap with ProseMirror) stay in their own chunks.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * React Aria bundles its built-in strings (button labels, announcements) in 34 languages, a third
 * of the shell. The studio speaks English: every other language's strings module becomes the
 * English one, so the shell carries them once. (What @react-aria/optimize-locales-plugin does.)
 */
function englishOnlyAriaStrings(): Plugin {
  const LOCALE_MODULE =
    /[\\/]node_modules[\\/](?:react-aria|react-stately|react-aria-components|@react-aria[\\/][^\\/]+|@react-stately[\\/][^\\/]+)[\\/].*[\\/]intl[\\/](?:[^\\/]+[\\/])?([a-z]{2}-[A-Z]{2})\.m?js$/;
  return {
    name: "studio:english-only-aria-strings",
    enforce: "pre",
    load(id) {
      const m = LOCALE_MODULE.exec(id);
      if (!m || m[1] === "en-US") return null;
      return `export { default } from "./en-US.mjs";`;
    },
  };
}

export default defineConfig({
  root,
  base: "/studio/",
  plugins: [englishOnlyAriaStrings(), react()],
  server: {
    // `vite` in studio/ during development: the API is the service's.
    proxy: { "/admin": "http://localhost:3931", "/studio/api": "http://localhost:3931" },
  },
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // The polyfill is an inline script in index.html; every browser the studio supports has modulepreload.
    modulePreload: { polyfill: false },
    // Never turn a small asset into a data: URL (the CSP's img-src / font-src need not allow data:).
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1200,
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: "codemirror", test: /node_modules[\\/](@codemirror|@lezer|crelt|style-mod|w3c-keyname|@marijn)[\\/]/, priority: 30 },
            { name: "tiptap", test: /node_modules[\\/](@tiptap|prosemirror-[a-z-]+|linkifyjs|orderedmap|rope-sequence|markdown-it|@remirror)[\\/]/, priority: 30 },
            // First, so that the editor groups (which take their dependencies along) leave React to the shell.
            { name: "vendor", test: /node_modules[\\/](react|react-dom|scheduler|use-sync-external-store|@tanstack)[\\/]/, priority: 40 },
          ],
        },
      },
    },
  },
});
