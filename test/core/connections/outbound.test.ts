import t from 'tap';
import { Outbound } from '../../../core/connections/outbound.js';

function sink() {
  const written: string[] = [];
  return {
    written,
    queued: 0,
    destroyed: false,
    write(frame: string) {
      written.push(frame);
      this.queued += Buffer.byteLength(frame);
      return true;
    },
    get writableLength() {
      return this.queued;
    },
    destroy() {
      this.destroyed = true;
    },
  };
}

t.test('frames are written whole and in order', async (t) => {
  const target = sink();
  const outbound = new Outbound(target, { softBytes: 100, hardBytes: 1000 });
  outbound.send('a\n');
  outbound.send('b\n');
  t.same(target.written, ['a\n', 'b\n']);
});

t.test('past the soft bound the connection is congested until it drains', async (t) => {
  const target = sink();
  const outbound = new Outbound(target, { softBytes: 10, hardBytes: 1000 });
  const signals: boolean[] = [];
  outbound.onCongestion = (congested) => signals.push(congested);
  outbound.send('0123456789');
  t.equal(outbound.congested, false, 'at the bound is not past it');
  outbound.send('x');
  t.equal(outbound.congested, true);
  outbound.drained();
  t.equal(outbound.congested, true, 'still queued');
  target.queued = 0;
  outbound.drained();
  t.equal(outbound.congested, false);
  t.same(signals, [true, false]);
});

t.test('past the hard bound the reader is disconnected and nothing more is written', async (t) => {
  const target = sink();
  const outbound = new Outbound(target, { softBytes: 10, hardBytes: 20 });
  t.equal(outbound.send('0123456789'), true);
  t.equal(outbound.send('0123456789'), true);
  t.equal(outbound.send('x'), false);
  t.equal(target.destroyed, true);
  t.equal(outbound.send('y'), false);
  t.equal(target.written.length, 3);
});

t.test('frames of one tick are batched between one cork and one uncork', async (t) => {
  const target = { ...sink(), corks: 0, uncorks: 0 };
  const batching = Object.assign(target, {
    cork() {
      target.corks++;
    },
    uncork() {
      target.uncorks++;
    },
  });
  const outbound = new Outbound(batching, { softBytes: 100, hardBytes: 1000 });
  outbound.send('a\n');
  outbound.send('b\n');
  t.equal(target.corks, 1);
  t.equal(target.uncorks, 0);
  await new Promise((resolve) => process.nextTick(resolve));
  t.equal(target.uncorks, 1);
  outbound.send('c\n');
  t.equal(target.corks, 2, 'a later tick is a new batch');
  t.same(target.written, ['a\n', 'b\n', 'c\n']);
});
