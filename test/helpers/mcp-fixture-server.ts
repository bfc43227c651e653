import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TYPESCRIPT_LOADER } from './typescript-loader.js';
import { WITHOUT_TEST_HOOKS } from './without-test-hooks.js';

const FIXTURE = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp-server.ts');

/** A `config.json` entry of `mcp_servers` running the fixture server (test/fixtures/mcp-server.ts) in `mode`. */
export function fixtureServerConfig(mode: string, extra: Record<string, unknown> = {}) {
  return {
    command: 'env',
    args: [...WITHOUT_TEST_HOOKS, '--import', TYPESCRIPT_LOADER, FIXTURE, mode],
    ...extra,
  };
}
