import t from 'tap';
import { op, startDaemon } from '../helpers/daemon.js';
import {
  killOnTeardown,
  processesWith,
  processStarted,
  sandboxUnavailable,
} from '../helpers/sandbox-machine.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { type Controller, codeOf, controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

const skip = sandboxUnavailable ?? false;

function sleeps(...markers: string[]) {
  return markers.map((marker, index) => ({
    id: `c${index}`,
    name: 'run_command',
    arguments: JSON.stringify({ command: marker }),
  }));
}

async function stop(who: Controller, turn: string): Promise<void> {
  const answer = await who.client.request(
    'turn.stop',
    { turn_id: turn },
    { session: who.session, control: who.control, operation: op() },
  );
  if (codeOf(answer) !== 'ok') throw new Error('the turn did not stop');
  await who.client.event('turn.terminal');
}

t.test('status shows the command slots in use and the commands waiting for one', { skip }, async (t) => {
  const markers = ['sleep 98791', 'sleep 98792', 'sleep 98793', 'sleep 98794'];
  killOnTeardown(t, ...markers);
  const provider = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    config: { tools: { enabled: ['run_command'] } },
    toolEnvironment: {
      searchPath: process.env.PATH ?? '/usr/bin:/bin',
      userHome: '/nonexistent',
      runtimeDirectory: null,
      socketPath: null,
    },
  });
  const status = await daemon.connect('in-process', []);
  const commands = async () =>
    ((await status.call('status')) as { sandbox: { commands: unknown } }).sandbox.commands;
  t.same(await commands(), { slots_in_use: 0, waiting: 0, waiting_sessions: 0, scanning: 0 });

  // One session asks for three commands at once: it holds half of the four slots, the third waits.
  provider.replyToolCalls(sleeps(...markers.slice(0, 3)));
  const first = await controller(daemon, 'in-process');
  const firstTurn = resultOf<{ turn_id: string }>(await startTurn(first, { prompt: 'go' })).turn_id;
  await processStarted(markers[0]!);
  await processStarted(markers[1]!);
  t.same(await commands(), { slots_in_use: 2, waiting: 1, waiting_sessions: 1, scanning: 0 });

  // Another session's command takes a slot of the other half at once.
  provider.replyToolCalls(sleeps(markers[3]!));
  const second = await controller(daemon, 'in-process');
  const secondTurn = resultOf<{ turn_id: string }>(await startTurn(second, { prompt: 'go' })).turn_id;
  await processStarted(markers[3]!);
  t.same(await commands(), { slots_in_use: 3, waiting: 1, waiting_sessions: 1, scanning: 0 });
  t.same(await processesWith(markers[2]!), [], 'the third of the first session still waits');

  await stop(first, firstTurn);
  await stop(second, secondTurn);
  t.same(await commands(), { slots_in_use: 0, waiting: 0, waiting_sessions: 0, scanning: 0 });
});
