import t from 'tap';
import { LoginProgress, type LoginProgressEvent } from '../../../core/auth/login-progress.js';

t.test('events wait for open(), then go in order; nothing follows the terminal', async (t) => {
  const sent: LoginProgressEvent[] = [];
  const progress = new LoginProgress((event) => sent.push(event));
  progress.push({ state: 'authorization_url', authorization_url: 'https://a.example/x', expires_in_ms: 1 });
  progress.push({ state: 'waiting' });
  t.equal(sent.length, 0);
  t.equal(progress.held, 2);
  progress.open();
  t.same(
    sent.map((event) => event.state),
    ['authorization_url', 'waiting'],
  );
  progress.push({ state: 'cancelled' });
  progress.push({ state: 'waiting' });
  t.same(
    sent.map((event) => event.state),
    ['authorization_url', 'waiting', 'cancelled'],
  );
});

t.test('the queue is bounded: the oldest events go first, the terminal stays', async (t) => {
  const sent: LoginProgressEvent[] = [];
  const progress = new LoginProgress((event) => sent.push(event), 2);
  progress.push({ state: 'waiting' });
  progress.push({ state: 'exchanging' });
  progress.push({ state: 'failed', code: 'exchange_failed' });
  t.equal(progress.held, 2);
  progress.open();
  t.same(
    sent.map((event) => event.state),
    ['exchanging', 'failed'],
  );
});

t.test('a closed queue drops what it holds and delivers nothing more', async (t) => {
  const sent: LoginProgressEvent[] = [];
  const progress = new LoginProgress((event) => sent.push(event));
  progress.push({ state: 'waiting' });
  progress.close();
  progress.open();
  progress.push({ state: 'completed' });
  t.equal(sent.length, 0);
  t.equal(progress.held, 0);
});
