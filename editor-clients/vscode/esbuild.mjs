// Bundles the extension (Node, CommonJS, `vscode` external) and the panel's webview
// script (browser IIFE, markdown-it included) into out/. `--production` minifies.
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'out/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  }),
  esbuild.build({
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'out/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  }),
]);
