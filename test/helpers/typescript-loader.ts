import { fileURLToPath } from 'node:url';

/**
 * The preload that runs the project's TypeScript as the test processes do (load-typescript.mjs), for a
 * node child started outside the runner's hooks: `node --import TYPESCRIPT_LOADER script.ts`.
 */
export const TYPESCRIPT_LOADER = fileURLToPath(new URL('./load-typescript.mjs', import.meta.url));
