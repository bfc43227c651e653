import type { WireClient } from '../../client/index.js';
import { call } from '../daemon-client.js';

interface StatusResult {
  tools: { run_command: 'off' | 'unavailable' | 'offered' };
  sandbox: { reason: string | null };
  mcp_servers: Array<{ name: string; state: string; reason?: string }>;
  skills: { skipped: unknown[] };
  instructions: { home: { state: string; reason: string | null } };
}

/** What of the daemon's configuration does not work as configured, one warning each (from `status`). */
export async function configurationWarnings(wire: WireClient): Promise<string[]> {
  const status = await call<StatusResult>(wire, 'status', {});
  const warnings: string[] = [];
  if (status.tools.run_command === 'unavailable') {
    warnings.push(`run_command is enabled but cannot run here (${status.sandbox.reason ?? 'unknown'})`);
  }
  for (const server of status.mcp_servers) {
    if (server.state === 'failed' || server.state === 'restarting') {
      warnings.push(
        `MCP server ${server.name} is ${server.state}${server.reason ? `: ${server.reason}` : ''}`,
      );
    }
  }
  if (status.skills.skipped.length > 0) {
    warnings.push(`${status.skills.skipped.length} skill(s) were skipped: \`magid status\` says why`);
  }
  const home = status.instructions.home;
  if (home.state === 'cut' || home.state === 'refused') {
    warnings.push(`the home's AGENTS.md was ${home.state}${home.reason ? `: ${home.reason}` : ''}`);
  }
  return warnings;
}
