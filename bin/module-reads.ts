import type { LoadHook } from 'node:module';

/** Modules read at once while the daemon starts, well below any open-files limit it can serve under. */
const READING_MAX = 16;

let reading = 0;
const waiting: Array<() => void> = [];

/** A loader hook (registered by magid.ts) that lets at most READING_MAX module reads run at once. */
export const load: LoadHook = async (url, context, nextLoad) => {
  if (reading >= READING_MAX) await new Promise<void>((resolve) => waiting.push(resolve));
  reading += 1;
  try {
    return await nextLoad(url, context);
  } finally {
    reading -= 1;
    waiting.shift()?.();
  }
};
