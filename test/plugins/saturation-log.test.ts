import pino from 'pino';
import t from 'tap';
import { saturationLogger } from '../../plugins/saturation-log.js';

function captured() {
  const lines: Array<Record<string, unknown>> = [];
  const log = saturationLogger(
    pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
  );
  return { lines, log };
}

t.test('a saturation is a warning and its clearing an info line, the counts under the bound', async (t) => {
  const { lines, log } = captured();
  log({ bound: 'evidence_turns', saturated: true, details: { retained: 256, bound: 256 } });
  log({ bound: 'evidence_turns', saturated: false, details: { retained: 192, bound: 256 } });
  t.match(lines, [
    {
      level: 40,
      bound: 'evidence_turns',
      evidence_turns: { retained: 256, bound: 256 },
      msg: 'the evidence of the most turns is retained: turn.start on profile connections is refused',
    },
    {
      level: 30,
      bound: 'evidence_turns',
      evidence_turns: { retained: 192 },
      msg: 'the turn evidence has room again',
    },
  ]);
});

t.test('every bound of the operation table has its own lines', async (t) => {
  const { lines, log } = captured();
  for (const bound of ['operations', 'recovery_slot', 'refusals', 'operation_share']) {
    log({ bound, saturated: true, details: {} });
    log({ bound, saturated: false, details: {} });
  }
  const messages = lines.map((line) => line.msg);
  t.equal(new Set(messages).size, 8, 'no two alike');
  t.notOk(
    messages.some((message) => String(message).endsWith('saturated')),
    'none is the fallback',
  );
  log({ bound: 'other', saturated: true, details: {} });
  t.equal(lines.at(-1)?.msg, 'other saturated', 'an unnamed bound still gets a line');
});
