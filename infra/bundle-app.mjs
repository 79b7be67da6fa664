// Precompiled start of a deployable (issue 17.3; the images of issue 18 run the same output):
// `node infra/bundle-app.mjs src/main.ts [out dir]` in an app's directory writes dist/main.js, one ES
// module with the app's TypeScript and that of the workspace packages it imports, and most
// third-party code, so that `node dist/main.js` starts without tsx compiling hundreds of files
// (the gateway's restart under tsx took 5-10 s of a reconnect storm, mostly loading modules).
//
// Kept out of the bundle and loaded from node_modules at run time (EXTERNAL): native addons and
// WebAssembly packages that find their files next to their own code, packages whose classes
// our code and an external package must share (nice-grpc's handlers are loaded from its
// package by grpc-server.ts, so nice-grpc, nice-grpc-common and @grpc/grpc-js stay single
// copies), and optional requires. Every external the bundle imports must resolve from the
// app's own directory (a dependency of the app), or the build fails and says which.
// A package.json read beside a module's source is inlined (name, version).
// Files a module opens beside itself with `new URL('./x.mjs', import.meta.url)` are copied to
// dist/ (the PGlite worker thread), and so are shell scripts it serves (`./x.sh`: the node
// installer).
//
// `--self-contained` (the node agent, issue 31): nothing is left to node_modules. Everything is
// inlined and minified into one file named after the app's bin and version,
// `<out dir>/<bin>-<version>.mjs`, beside `<bin>-<version>.mjs.sha256` (sha256sum's format):
// what the control plane serves to a node, which runs it with its own Node 20+. Pure
// JavaScript, so the one file serves x64 and arm64 alike.

import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';

const EXTERNAL = [
  '@node-rs/argon2',
  '@electric-sql/pglite',
  'pg-native',
  'nice-grpc',
  'nice-grpc-common',
  '@grpc/grpc-js',
  'swagger-ui-dist',
  'sql.js',
];

const appDir = process.cwd();
const SELF_CONTAINED = process.argv.includes('--self-contained');
const [entryArg, dirArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const entry = entryArg ?? 'src/main.ts';
// Another directory inside the app (a test's own build) resolves externals the same way.
const finalDir = resolve(appDir, dirArg ?? 'dist');
const manifest = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8'));
// `--version=X`: the build names itself X (file name and the version it reports) instead of the
// package's version: a release candidate, or the tests' second release to upgrade to.
const versionArg = process.argv.find((a) => a.startsWith('--version='))?.slice('--version='.length);
if (versionArg !== undefined) {
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(versionArg)) throw new Error(`--version=${versionArg}: not a semver`);
  manifest.version = versionArg;
}
const app = { name: manifest.name, version: manifest.version };
const binName = Object.keys(manifest.bin ?? {})[0] ?? basename(appDir);
// Written beside it and swapped in whole at the end: a process starting from dist/ meanwhile
// (a bench restarting the gateway while someone builds) finds the old build or the new one.
const outDir = join(dirname(finalDir), `.dist-build-${process.pid}`);
const outFile = SELF_CONTAINED ? join(outDir, `${binName}-${manifest.version}.mjs`) : join(outDir, basename(entry).replace(/\.ts$/, '.js'));
const appRequire = createRequire(join(appDir, 'package.json'));
const packageOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

const used = new Set();
const assets = new Map();
const result = await build({
  entryPoints: [join(appDir, entry)],
  outfile: outFile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: SELF_CONTAINED ? false : 'linked',
  minify: SELF_CONTAINED,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  // CommonJS code in an ES module bundle still calls require() for Node's own modules.
  banner: {
    js: `${SELF_CONTAINED ? '#!/usr/bin/env node\n' : ''}import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);`,
  },
  plugins: [
    {
      name: 'svc-externals',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:')) return undefined;
          const pkg = packageOf(args.path);
          if (SELF_CONTAINED ? pkg !== 'pg-native' : !EXTERNAL.includes(pkg)) return undefined;
          used.add(pkg);
          return { path: args.path, external: true };
        });
        b.onLoad({ filter: /\.ts$/ }, (args) => {
          if (args.path.includes('node_modules')) return undefined;
          const text = readFileSync(args.path, 'utf8');
          for (const m of text.matchAll(/new URL\('(\.\/[^']+\.(?:m?js|sh))', import\.meta\.url\)/g)) {
            const src = resolve(dirname(args.path), m[1]);
            const name = basename(src);
            if (assets.has(name) && assets.get(name) !== src) throw new Error(`two files named ${name} beside bundled modules`);
            assets.set(name, src);
            // The copied file's own imports resolve from dist/: they must be externals the app has.
            if (src.endsWith('.sh')) continue;
            for (const imp of readFileSync(src, 'utf8').matchAll(/from '([^.'][^']*)'/g))
              if (!imp[1].startsWith('node:')) used.add(packageOf(imp[1]));
          }
          // A module reading its package's manifest beside its source (`new URL('../package.json',
          // import.meta.url)`, the version it reports) would read whatever sits at that path from
          // dist/ (nothing, or another package's): the manifest's name and version are put in at
          // build time instead, the version of the code that was built.
          const manifest = /readFileSync\(new URL\('((?:\.\.\/)+package\.json)', import\.meta\.url\), 'utf8'\)/g;
          if (!manifest.test(text)) return undefined;
          const contents = text.replace(manifest, (_, rel) => {
            const read = JSON.parse(readFileSync(resolve(dirname(args.path), rel), 'utf8'));
            const version = read.name === app.name ? app.version : read.version;
            return JSON.stringify(JSON.stringify({ name: read.name, version }));
          });
          return { contents, loader: 'ts' };
        });
      },
    },
  ],
});

for (const [name, src] of assets) copyFileSync(src, join(outDir, name));

// pg-native is optional (pg requires it only when asked for its native client).
const missing = [...used]
  .filter((pkg) => pkg !== 'pg-native')
  .filter((pkg) => {
    try {
      appRequire.resolve(`${pkg}/package.json`);
      return false;
    } catch {
      try {
        appRequire.resolve(pkg);
        return false;
      } catch {
        return true;
      }
    }
  });
if (missing.length) {
  rmSync(outDir, { recursive: true, force: true });
  console.error(
    `${basename(appDir)}: the bundle loads ${missing.join(', ')} from node_modules at run time, but the app does not depend on ${missing.length > 1 ? 'them' : 'it'}: add to its package.json dependencies`,
  );
  process.exit(1);
}
if (SELF_CONTAINED && (assets.size > 0 || [...used].some((pkg) => pkg !== 'pg-native'))) {
  rmSync(outDir, { recursive: true, force: true });
  console.error(`${basename(appDir)}: a self-contained build cannot load ${[...assets.keys(), ...used].join(', ')} beside itself`);
  process.exit(1);
}
if (SELF_CONTAINED) {
  const sum = createHash('sha256').update(readFileSync(outFile)).digest('hex');
  writeFileSync(`${outFile}.sha256`, `${sum}  ${basename(outFile)}\n`);
}
// Files copied beside the bundle are inputs too: a test runner deciding whether the bundle is
// fresh (packages/testkit app-entry.ts) sees a changed script as a changed build.
for (const src of assets.values()) result.metafile.inputs[relative(appDir, src)] ??= { bytes: statSync(src).size, imports: [] };
writeFileSync(join(outDir, 'meta.json'), JSON.stringify(result.metafile));
const old = join(dirname(finalDir), `.dist-old-${process.pid}`);
if (existsSync(finalDir)) renameSync(finalDir, old);
renameSync(outDir, finalDir);
rmSync(old, { recursive: true, force: true });
const bytes = Object.values(result.metafile.outputs).reduce((a, o) => a + o.bytes, 0);
console.log(
  `${basename(appDir)}: ${entry} -> ${basename(finalDir)}/ (${(bytes / 1e6).toFixed(1)} MB; ${SELF_CONTAINED ? `one file, ${basename(outFile)}` : `external: ${[...used].sort().join(', ') || 'none'}`})`,
);
