// Bundles the extension (Node, CommonJS, `vscode` external) and the panel's webview
// script (browser IIFE, markdown-it included) into out/. `--production` minifies.
// `--e2e` bundles the end-to-end test extension instead (e2e/extension/out/).
//
// Each bundle is held to what it may contain: the extension nothing of e2e/ or test/ (the
// .vsix ships no test code), the test extension nothing of src/ (it reaches the extension
// only through the API that activate() returns; its imports of src/ are types).
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', metafile: true };
const node = { platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] };

/** Build, then fail if one of the bundle's inputs is under a folder of `forbidden`. */
async function build(options, forbidden) {
  const { metafile } = await esbuild.build({ ...common, ...options });
  const wrong = Object.keys(metafile.inputs).filter((input) => forbidden.some((folder) => input.startsWith(folder)));
  if (wrong.length > 0) throw new Error(`${options.outfile} must not bundle ${wrong.join(', ')}`);
}

const bundles = process.argv.includes('--e2e')
  ? [build({ ...node, entryPoints: ['e2e/extension/src/extension.ts'], outfile: 'e2e/extension/out/extension.js' }, ['src/'])]
  : [
      build({ ...node, entryPoints: ['src/extension.ts'], outfile: 'out/extension.js' }, ['e2e/', 'test/']),
      build(
        { entryPoints: ['webview/main.ts'], outfile: 'out/webview.js', platform: 'browser', format: 'iife', target: 'es2022' },
        ['e2e/', 'test/'],
      ),
    ];
await Promise.all(bundles);
