import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { type StdioStreams, stdio } from '../../bin/stdio.js';
import { WireClient } from '../../client/wire-client.js';
import type { ProviderSettings } from '../../config/settings.js';
import { lockHome } from '../../core/endpoint/home-lock.js';
import { stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';

const NO_PROVIDER = { baseUrl: null, model: null, apiKey: null };

/** A fresh home, its streams, and a client writing to the input and reading every frame of the output. */
function harness(t: Test, provider: ProviderSettings = NO_PROVIDER) {
  const root = mkdtempSync(join(tmpdir(), 'magid-stdio-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const streams: StdioStreams = { input: new PassThrough(), output: new PassThrough() };
  const input = streams.input as PassThrough;
  const client = new WireClient({ write: (line) => input.write(line), end: () => input.end() });
  streams.output.on('data', (bytes: Buffer) => client.receive(bytes));
  const run = () =>
    stdio(
      {
        home,
        provider,
        logLevel: 'silent',
        toolEnvironment: { searchPath: '', userHome: root, runtimeDirectory: null, socketPath: null },
      },
      streams,
    );
  return { home, input, output: streams.output, client, run };
}

/** True when the home's lock can be taken, which it then releases. */
function homeIsFree(home: string): boolean {
  lockHome(home).release();
  return true;
}

t.test('at the end of its input it answers what it read, ends its output and returns 0', async (t) => {
  const { home, output, client, run } = harness(t);
  const exited = run();
  await client.initialize([]);
  const status = client.request('status');
  client.close();
  t.equal((await status).ok, true, 'a request read before the end is answered');
  t.equal(await exited, 0);
  t.ok(output.writableFinished, 'its output was ended and flushed first');
  t.ok(homeIsFree(home), 'the home lock is released');
});

t.test('the end of its input abandons a catalog refresh waiting on the provider', async (t) => {
  const provider = await ScriptedProvider.start(t);
  const hold = provider.hold();
  provider.scriptModels(stream([hold]));
  const { home, client, run } = harness(t, { baseUrl: provider.baseUrl, model: 'm', apiKey: null });
  const exited = run();
  await client.initialize([]);
  const refresh = client.request('catalog.refresh', {}, { operation: 'op-refresh' });
  await hold.reached;
  client.close();
  const waited = new Promise<'still waiting'>((resolve) =>
    setTimeout(() => resolve('still waiting'), 10_000),
  );
  t.equal(await Promise.race([exited, waited]), 0, 'it exits without waiting for the provider');
  t.match(await refresh, { ok: false, error: { code: 'provider_error' } }, 'the refresh is answered');
  hold.release();
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(existsSync(join(home, 'models.json')), false, 'and no catalog is written after the client left');
});

t.test('an input that fails ends the client as its end does', async (t) => {
  const { home, input, client, run } = harness(t);
  const exited = run();
  await client.initialize([]);
  input.destroy(Object.assign(new Error('read EIO'), { code: 'EIO' }));
  t.equal(await exited, 0);
  t.ok(homeIsFree(home));
});

t.test('a home another daemon holds returns 1 and writes nothing', async (t) => {
  const { home, client, run } = harness(t);
  const held = lockHome(home);
  t.teardown(() => held.release());
  t.equal(await run(), 1);
  t.same(client.received, [], 'nothing reached the output');
});

t.test('a config file it cannot read returns 1 and releases the home', async (t) => {
  const { home, client, run } = harness(t);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.json'), '{');
  t.equal(await run(), 1);
  t.same(client.received, []);
  t.ok(homeIsFree(home));
});
