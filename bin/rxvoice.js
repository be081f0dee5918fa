#!/usr/bin/env node
// Launcher of the `rxvoice` command: runs the built CLI (dist/cli/main.js) when present,
// otherwise the TypeScript source through tsx (so `npx rxvoice` works in a fresh checkout).
// RXVOICE_FROM_SOURCE=1 always runs the source, even when a (possibly stale) build exists:
// the tests set it, so they test the code they see.
import { existsSync } from 'node:fs';

// engines: node >= 20.19 (the same check as src/core/node-version.ts, before anything loads)
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`rxvoice: rxvoice needs Node 20.19 or later; this is ${process.versions.node}\n`);
  process.exit(1);
}
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
let cli;
if (process.env.RXVOICE_FROM_SOURCE !== '1' && existsSync(built)) {
  cli = await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
await cli.run();
