// Loaded with --import by `npm test` into every test process and every node child of one, in place of
// tsx: the project's TypeScript runs through typescript-hooks.mjs, which leave every other module alone.
// MAGID_TYPESCRIPT_HOOKS names them to the worker threads (core/module-worker.ts), which Node 20 starts
// without the process's hooks.
import { register } from 'node:module';

const hooks = new URL('./typescript-hooks.mjs', import.meta.url).href;
register(hooks);
process.env.MAGID_TYPESCRIPT_HOOKS = hooks;
