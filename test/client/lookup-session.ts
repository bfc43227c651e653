import type { Test } from 'tap';
import { MagiClient } from '../../client/magi-client.js';
import type { Session } from '../../client/session.js';
import type { TestDaemon } from '../helpers/daemon.js';
import type { ScriptedProvider } from '../helpers/scripted-provider.js';
import { TOOL_CONTRACT, turnDaemon } from '../routes/turn.fixture.js';
import { Severable } from './severable.js';

export interface LookupSession {
  daemon: TestDaemon;
  provider: ScriptedProvider;
  /** The cuttable connections the client goes through. */
  net: Severable;
  client: MagiClient;
  session: Session;
}

/** A daemon with a scripted provider, and a client session over cuttable connections with the `lookup` tool. */
export async function lookupSession(t: Test): Promise<LookupSession> {
  const { daemon, provider } = await turnDaemon(t);
  const net = new Severable(await daemon.socketPath());
  const client = await MagiClient.over(net.open);
  const session = await client.createSession(daemon.workspace, 'Test session');
  await session.registerTool({
    name: 'lookup',
    description: 'Find a note',
    source: { kind: 'inline', content: TOOL_CONTRACT },
  });
  return { daemon, provider, net, client, session };
}
