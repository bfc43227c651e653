import { Command, InvalidArgumentError } from 'commander';
import { startScriptedProvider } from './scripted-provider.js';

/** The port `npm run demo:provider` listens on unless told otherwise: the README's "Try it" names it. */
const DEMO_PROVIDER_PORT = 8177;

const { port } = new Command('demo:provider')
  .description(
    "run the demo's scripted model on loopback, for `magid exec --provider-base-url`: it reads a .md file named in the prompt with the daemon's read_file, and says Hello. to anything else",
  )
  .option(
    '--port <port>',
    'the port on 127.0.0.1',
    (value) => {
      if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535)
        throw new InvalidArgumentError('expected a port');
      return Number(value);
    },
    DEMO_PROVIDER_PORT,
  )
  .parse()
  .opts<{ port: number }>();

const provider = await startScriptedProvider(port);
process.stdout.write(`scripted model provider at ${provider.baseUrl} (Ctrl-C stops it)\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void provider.close().then(() => process.exit(0)));
}
