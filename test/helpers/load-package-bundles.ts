import { register } from 'node:module';
import { bundledEntries } from './package-bundles.js';

// Loaded with --import after tsx by `npm test` into every test process and every node child of one.
const entries = bundledEntries();
if (Object.keys(entries).length > 0) {
  register('./package-bundles-hooks.ts', import.meta.url, { data: entries });
}
