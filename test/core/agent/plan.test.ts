import t from 'tap';
import { AgentToolbox } from '../../../core/agent/agent-toolbox.js';
import { BUILTIN_LIMITS } from '../../../core/agent/builtin-limits.js';
import { PLAN_TOO_LARGE, type PlanStep, shownPlan } from '../../../core/agent/plan.js';
import { newId } from '../../../core/ids.js';
import { WIRE_LIMITS } from '../../../core/limits.js';
import { utf8ByteLength } from '../../../core/resources/unicode.js';

const toolbox = new AgentToolbox(['update_plan'], {
  workspaceTools: {} as never,
  commands: null,
  web: null,
  excludedDirectories: [],
  skills: { installed: [], excludedDirectories: [] },
  mcp: null,
  warn: () => {},
});

const accepted = (steps: readonly PlanStep[]) => toolbox.accepts('update_plan', { steps });
const step = (text: string): PlanStep => ({ step: text, status: 'pending' });
const encodedBytes = (value: unknown) => utf8ByteLength(JSON.stringify(value));

t.test(
  'a step is bounded in characters, whatever their encoding; one past the bound is refused',
  async (t) => {
    const bound = BUILTIN_LIMITS.plan_step_chars;
    t.equal(bound, 256);
    for (const [script, character] of [
      ['ASCII', 'a'],
      ['two-byte', 'é'],
      ['three-byte', '茶'],
      ['four-byte', '🍵'],
    ] as const) {
      const longest = character.repeat(bound);
      t.ok(accepted([step(longest)]), `${bound} ${script} characters are a step`);
      t.notOk(accepted([step(`${longest}${character}`)]), `${bound + 1} ${script} characters are refused`);
      t.same(shownPlan([step(longest)]), [step(longest)], `${bound} ${script} characters are shown whole`);
    }
    t.equal(utf8ByteLength('é'.repeat(200)), 400);
    t.same(shownPlan([step('é'.repeat(200))]), [step('é'.repeat(200))], '200 é stay 200 characters');
    t.notOk(accepted([step('')]), 'an empty step is refused');
  },
);

t.test('a plan has 1 to 32 steps', async (t) => {
  const steps = (count: number) => Array.from({ length: count }, (_, i) => step(`step ${i}`));
  t.ok(accepted(steps(BUILTIN_LIMITS.plan_steps)));
  t.notOk(accepted(steps(BUILTIN_LIMITS.plan_steps + 1)));
  t.notOk(accepted([]));
});

/**
 * 32 steps of 256 characters whose compact JSON takes exactly `bytes`: each `a` turned into a four-byte
 * character adds 3 bytes, each turned into a quote (escaped, two bytes) adds 1.
 */
function planOfBytes(bytes: number): PlanStep[] {
  const texts = Array.from({ length: BUILTIN_LIMITS.plan_steps }, () =>
    Array.from({ length: BUILTIN_LIMITS.plan_step_chars }, () => 'a'),
  );
  let missing = bytes - encodedBytes(texts.map((text) => step(text.join(''))));
  for (const text of texts) {
    for (let i = 0; i < text.length && missing > 0; i++) {
      text[i] = missing >= 3 ? '🍵' : '"';
      missing -= missing >= 3 ? 3 : 1;
    }
  }
  return texts.map((text) => step(text.join('')));
}

t.test('the plan as shown is refused whole past 30,720 encoded bytes, so its activity fits', async (t) => {
  const largest = planOfBytes(BUILTIN_LIMITS.plan_bytes);
  t.equal(encodedBytes(largest), BUILTIN_LIMITS.plan_bytes);
  t.ok(accepted(largest), 'the schema allows it');
  t.same(shownPlan(largest), largest, 'at the bound it is shown whole');
  const activity = { turn_id: newId('turn'), activity: { kind: 'plan', steps: largest } };
  t.ok(encodedBytes(activity) <= WIRE_LIMITS.payload_bytes, 'its activity fits a payload');
  const over = planOfBytes(BUILTIN_LIMITS.plan_bytes + 1);
  t.equal(encodedBytes(over), BUILTIN_LIMITS.plan_bytes + 1);
  t.ok(accepted(over), 'the schema allows this one too');
  t.equal(shownPlan(over), null, 'one past the bound it is refused');
  t.match(PLAN_TOO_LARGE, { ok: false, code: 'plan_too_large' });
  const escaped = Array.from({ length: BUILTIN_LIMITS.plan_steps }, () =>
    step('\u0001'.repeat(BUILTIN_LIMITS.plan_step_chars)),
  );
  t.ok(accepted(escaped));
  t.equal(shownPlan(escaped), null, 'control characters count as the six bytes each encodes to');
});

t.test('credential-looking text is replaced, never cut', async (t) => {
  const text = `check ${'x'.repeat(200)} with token=abcdefgh1234 `;
  const [shown] = shownPlan([step(text)])!;
  t.equal(shown?.step, `check ${'x'.repeat(200)} with token=[redacted] `);
});
