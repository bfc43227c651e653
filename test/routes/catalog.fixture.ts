import type { Test } from 'tap';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';

export interface CatalogDaemon {
  daemon: TestDaemon;
  provider: ScriptedProvider;
}

/** A daemon whose provider is a scripted server, with no model chosen at startup unless told. */
export async function catalogDaemon(t: Test, options: { model?: string | null; home?: string } = {}) {
  const provider = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: options.model ?? null, apiKey: null },
    ...(options.home ? { home: options.home } : {}),
  });
  return { daemon, provider } satisfies CatalogDaemon;
}

/** A `GET /models` answer listing `ids`, as OpenAI-compatible servers shape it. */
export function listing(ids: readonly string[], extra: Record<string, unknown> = {}) {
  return {
    object: 'list',
    data: ids.map((id) => ({ id, object: 'model', created: 1_767_225_600, owned_by: 'lab', ...extra })),
  };
}
