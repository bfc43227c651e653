import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { HistoryStore } from '../../../core/history/history-store.js';
import { TITLE_LIMITS } from '../../../core/limits.js';
import type {
  ChatProvider,
  ProviderEvent,
  ProviderRequest,
  ProviderRound,
} from '../../../core/provider/chat-provider.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
import { TITLE_INSTRUCTION } from '../../../core/sessions/title-text.js';
import { type TitleFailure, TitleWorker } from '../../../core/sessions/title-worker.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';

const SELECTION = { model: 'title-model', reasoningEffort: null, fast: false };

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A provider round the test answers by hand; aborting its signal rejects it as `cancelled`. */
interface HeldRound {
  request: ProviderRequest;
  /** False when the callback refused the event. */
  emit: (event: ProviderEvent) => boolean;
  answer: (text: string) => void;
  fail: (error: unknown) => void;
}

function heldProvider(): { provider: ChatProvider; rounds: HeldRound[] } {
  const rounds: HeldRound[] = [];
  const provider: ChatProvider = {
    complete: (request, onEvent) =>
      new Promise<ProviderRound>((resolve, reject) => {
        request.signal.addEventListener('abort', () => reject(new ProviderError('cancelled')));
        // As the real adapter does, an error thrown by the callback ends the round with that error.
        const emit = (event: ProviderEvent): boolean => {
          try {
            onEvent(event);
            return true;
          } catch (error) {
            reject(error);
            return false;
          }
        };
        rounds.push({
          request,
          emit,
          answer: (text) => {
            if (emit({ kind: 'text', delta: text }))
              resolve({ text, toolCalls: [], finishReason: 'stop', usage: null });
          },
          fail: reject,
        });
      }),
  };
  return { provider, rounds };
}

interface Fixture {
  clock: FakeClock;
  store: HistoryStore;
  worker: TitleWorker;
  rounds: HeldRound[];
  failures: Array<[string, TitleFailure]>;
  holds: { held: number };
}

function fixture(t: { teardown: (fn: () => Promise<void>) => void }): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'magid-titles-'));
  const store = new HistoryStore(join(dir, 'history.sqlite3'));
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clock = fakeClock();
  const { provider, rounds } = heldProvider();
  const failures: Array<[string, TitleFailure]> = [];
  const holds = { held: 0 };
  const worker = new TitleWorker({
    clock,
    history: store,
    provider,
    holdIdle: () => {
      holds.held++;
      return () => holds.held--;
    },
    failed: (sessionId, reason) => failures.push([sessionId, reason]),
  });
  for (const [id, title] of [
    ['ses_a', null],
    ['ses_titled', 'Given'],
  ] as const) {
    store.createSession(
      { session_id: id, workspace: '/w', title, created_at: 1, updated_at: 1 },
      { kind: 'session.created', created_at: 1, data: { title } },
    );
  }
  return { clock, store, worker, rounds, failures, holds };
}

t.test('the answer becomes the bounded title of the session, stored durably', async (t) => {
  const { store, worker, rounds, failures, holds, clock } = fixture(t);
  worker.firstTurnCompleted('ses_a', 'Where is my tea note?', 'It is tea.md.', SELECTION);
  t.equal(worker.isRunning('ses_a'), true);
  t.equal(rounds.length, 1);
  const { request } = rounds[0]!;
  t.equal(request.system, TITLE_INSTRUCTION);
  t.same(request.tools, []);
  t.same(request.selection, SELECTION, 'the model selection the turn ran with');
  t.same(request.messages, [
    { role: 'user', content: 'Request:\nWhere is my tea note?\n\nAnswer:\nIt is tea.md.' },
  ]);
  t.equal(holds.held, 1, 'the idle stop waits for the title');
  clock.advance(1_500);
  rounds[0]!.answer('"Tea note location"\nBecause the user asked.');
  await worker.settled('ses_a');
  t.match(store.session('ses_a'), { title: 'Tea note location', updated_at: clock.wallNow() });
  t.same(failures, []);
  t.equal(holds.held, 0);
  t.equal(worker.isRunning('ses_a'), false);
});

t.test('a session with a title, or one already getting one, asks for none', async (t) => {
  const { store, worker, rounds } = fixture(t);
  worker.firstTurnCompleted('ses_titled', 'p', 'a', SELECTION);
  worker.firstTurnCompleted('ses_missing', 'p', 'a', SELECTION);
  t.equal(rounds.length, 0);
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  t.equal(rounds.length, 1, 'one title request per session at a time');
  rounds[0]!.answer('First');
  await worker.settled('ses_a');
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  t.equal(rounds.length, 1, 'a titled session asks for none again');
  t.equal(store.session('ses_titled')?.title, 'Given');
});

t.test('a provider failure or an empty answer leaves the title null and is reported by kind', async (t) => {
  const { store, worker, rounds, failures, holds } = fixture(t);
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  rounds[0]!.fail(new ProviderError('http_status', 500));
  await worker.settled('ses_a');
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  rounds[1]!.answer('   \n  ');
  await worker.settled('ses_a');
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  rounds[2]!.fail(new Error('unexpected'));
  await worker.settled('ses_a');
  t.same(failures, [
    ['ses_a', 'provider_error'],
    ['ses_a', 'no_title'],
    ['ses_a', 'no_title'],
  ]);
  t.equal(store.session('ses_a')?.title, null);
  t.equal(holds.held, 0);
});

t.test('a store that cannot write the title is reported and nothing else happens', async (t) => {
  const { store, worker, rounds, failures } = fixture(t);
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  await store.close();
  rounds[0]!.answer('Title');
  await worker.settled('ses_a');
  t.same(failures, [['ses_a', 'store_error']]);
});

t.test('at its deadline the request is aborted and the session keeps no title', async (t) => {
  const { store, worker, rounds, failures, clock, holds } = fixture(t);
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  let ended = false;
  void worker.settled('ses_a').then(() => (ended = true));
  clock.advance(TITLE_LIMITS.deadline_ms - 1);
  await settle();
  t.equal(rounds[0]!.request.signal.aborted, false);
  t.equal(ended, false, 'still running 1 ms before the deadline');
  clock.advance(1);
  await settle();
  t.equal(rounds[0]!.request.signal.aborted, true);
  t.equal(ended, true);
  t.same(failures, [['ses_a', 'deadline']]);
  t.equal(store.session('ses_a')?.title, null);
  t.equal(holds.held, 0);
});

t.test('a long answer is read only until a title is sure to be in it', async (t) => {
  const { store, worker, rounds } = fixture(t);
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  const round = rounds[0]!;
  t.equal(round.emit({ kind: 'reasoning', delta: 'r'.repeat(TITLE_LIMITS.answer_chars) }), true);
  t.equal(round.emit({ kind: 'text', delta: 'Long ' }), true);
  t.equal(
    round.emit({ kind: 'text', delta: 'x'.repeat(TITLE_LIMITS.answer_chars) }),
    false,
    'the request is ended once enough text arrived',
  );
  await worker.settled('ses_a');
  t.equal(store.session('ses_a')?.title, `Long ${'x'.repeat(TITLE_LIMITS.title_bytes - 5)}`);
});

t.test('close waits for running titles and asks for no more', async (t) => {
  const { store, worker, rounds, clock } = fixture(t);
  worker.firstTurnCompleted('ses_a', 'p', 'a', SELECTION);
  let closed = false;
  const closing = worker.close().then(() => (closed = true));
  await settle();
  t.equal(closed, false);
  rounds[0]!.answer('Before close');
  await closing;
  t.equal(store.session('ses_a')?.title, 'Before close');
  store.createSession(
    { session_id: 'ses_b', workspace: '/w', title: null, created_at: 1, updated_at: 1 },
    { kind: 'session.created', created_at: 1, data: { title: null } },
  );
  worker.firstTurnCompleted('ses_b', 'p', 'a', SELECTION);
  t.equal(rounds.length, 1);
  clock.advance(TITLE_LIMITS.deadline_ms);
});
