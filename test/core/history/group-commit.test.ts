import t from 'tap';
import { GroupCommit } from '../../../core/history/group-commit.js';

/** A group commit over a journal that records each transaction's writes, committed when `commit` runs. */
function journaled(options: { failCommit?: boolean } = {}) {
  const transactions: string[][] = [];
  const deferred: Array<() => void> = [];
  let current: string[] | null = null;
  const commits = new GroupCommit({
    transaction: (writes) => {
      current = [];
      writes();
      if (options.failCommit) throw new Error('disk full');
      transactions.push(current);
      current = null;
    },
    savepoint: (write) => {
      const mark = current!.length;
      try {
        return write();
      } catch (error) {
        current!.length = mark;
        throw error;
      }
    },
    defer: (commit) => deferred.push(commit),
  });
  const write = (name: string) => () => {
    current!.push(name);
    return name;
  };
  const commitNow = () => {
    for (const commit of deferred.splice(0)) commit();
  };
  return { commits, transactions, write, commitNow };
}

t.test(
  'writes queued before the commit share one transaction, in order, and resolve once it is done',
  async (t) => {
    const { commits, transactions, write, commitNow } = journaled();
    let resolved = 0;
    const pending = ['a', 'b', 'c'].map((name) =>
      commits.enqueue(write(name)).then((value) => {
        resolved += 1;
        return value;
      }),
    );
    await Promise.resolve();
    t.equal(resolved, 0, 'nothing resolves before its transaction commits');
    t.same(transactions, []);
    commitNow();
    t.same(await Promise.all(pending), ['a', 'b', 'c'], 'each resolves with its own result');
    t.same(transactions, [['a', 'b', 'c']], 'one transaction for the three writes, in queue order');
    const later = commits.enqueue(write('d'));
    commitNow();
    t.equal(await later, 'd');
    t.same(transactions, [['a', 'b', 'c'], ['d']], 'a write queued after the commit takes the next one');
  },
);

t.test('a failing write undoes and rejects only itself', async (t) => {
  const { commits, transactions, write, commitNow } = journaled();
  const first = commits.enqueue(write('a'));
  const failing = commits.enqueue(() => {
    write('half')();
    throw new Error('constraint');
  });
  const last = commits.enqueue(write('c'));
  commitNow();
  t.equal(await first, 'a');
  await t.rejects(failing, /constraint/);
  t.equal(await last, 'c');
  t.same(transactions, [['a', 'c']], 'the failed write left nothing behind');
});

t.test('a commit that fails rejects every write of its transaction', async (t) => {
  const { commits, write, commitNow } = journaled({ failCommit: true });
  const writes = [commits.enqueue(write('a')), commits.enqueue(write('b'))];
  commitNow();
  for (const pending of writes) await t.rejects(pending, /disk full/);
});

t.test('close commits what is queued and refuses later writes', async (t) => {
  const { commits, transactions, write, commitNow } = journaled();
  const queued = commits.enqueue(write('a'));
  commits.close();
  t.equal(await queued, 'a', 'the queued write was committed by close');
  t.same(transactions, [['a']]);
  await t.rejects(commits.enqueue(write('b')), /closed/);
  commitNow();
  t.same(transactions, [['a']], 'the deferred commit after close finds nothing to do');
});
