// Loaded with --import by `npm test` into every test process and every node child of one, in place of
// tsx: the project's TypeScript runs through typescript-hooks.mjs, which leave every other module alone.
import { register } from 'node:module';

register('./typescript-hooks.mjs', import.meta.url);
