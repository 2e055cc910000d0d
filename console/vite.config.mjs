// The web console's build: Vite bundles console/src into dist/console, served by the service at /console.
// Run by scripts/build-console.mjs (npm run build). Hashed file names under assets/ (served as immutable),
// no inline script or style (the Content-Security-Policy forbids them), nothing loaded from elsewhere.
import { fileURLToPath } from 'node:url';

export default {
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  // Preact's JSX runtime (no React)
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // never inline assets as data: URLs in CSS or scripts; the files stay files
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
};
