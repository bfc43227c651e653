import { readFileSync } from 'node:fs';
import t from 'tap';
import { parseConfig } from '../../../config/config-file.js';
import type { McpServerEntry } from '../../../core/mcp/mcp-types.js';
import { MODEL_TOOL_NAME } from '../../../core/mcp/tool-names.js';
import { fixtureServerConfig } from '../../helpers/mcp-fixture-server.js';
import { loopbackMcpServer } from '../../helpers/mcp-http-server.js';
import { harness, neverAborted, untilState } from './mcp-fixture.js';

// Ten fixture children start from the TypeScript sources at once.
t.setTimeout(120_000);

const READMES = readFileSync(
  new URL('../../fixtures/mcp-configs/readme-servers.json', import.meta.url),
  'utf8',
);

t.test(
  'every server of the eleven READMEs starts under its own key, beside a broken entry that fails alone',
  async (t) => {
    const remote = await loopbackMcpServer(t);
    const document = JSON.parse(READMES) as { mcpServers: Record<string, Record<string, unknown>> };
    // Each entry as its README writes it, but running the fixture (or the loopback server) instead of
    // a package from the registry: the key, type, env and headers are the README's.
    const servers: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(document.mcpServers)) {
      servers[key] =
        entry.url === undefined
          ? { ...entry, ...fixtureServerConfig('normal') }
          : { ...entry, url: remote.url };
    }
    servers.broken = { args: ['--no-command'] };
    const entries = parseConfig(JSON.stringify({ mcpServers: servers })).mcp_servers as Record<
      string,
      McpServerEntry
    >;
    const { mcp, warnings } = harness(t, () => entries);
    const keys = Object.keys(document.mcpServers);
    for (const key of keys) await untilState(mcp, key, 'ready');

    t.same(mcp.status().at(-1), {
      name: 'broken',
      state: 'failed',
      tools: 0,
      reason: 'it has neither command nor url',
    });
    t.same(
      warnings.filter((warning) => warning.fields.server === 'broken'),
      [
        {
          fields: { server: 'broken', reason: 'it has neither command nor url' },
          message: 'MCP server configuration refused; the server is not started',
        },
      ],
      'one warning naming the key and the reason',
    );
    const names = mcp.tools().map((tool) => tool.name);
    t.ok(
      names.every((name) => MODEL_TOOL_NAME.test(name)),
      'every name is one providers accept',
    );
    t.equal(new Set(names).size, names.length, 'no two alike');
    for (const key of keys) {
      const name = key === 'context7' ? 'mcp_context7_get-echo' : `mcp_${key}_echo`;
      t.ok(names.includes(name), `${key} offers ${name}`);
      t.match(await mcp.call(name, { text: `via ${key}` }, neverAborted()), {
        ok: true,
        output: `"via ${key}"`,
      });
    }
    t.ok(
      remote.requests.every((request) => request.headers.context7_api_key === 'YOUR_API_KEY'),
      "context7's header on every request",
    );
  },
);
