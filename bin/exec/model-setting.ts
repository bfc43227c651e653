import { WireCallError, type WireClient } from '../../client/index.js';
import { call, operationId } from '../daemon-client.js';

interface SettingsView {
  project: { model: string | null } | null;
  effective: { model: string | null };
}

/**
 * `--model` for one turn, through the daemon's own settings: the model is pinned for the session's
 * workspace (`settings.update`, after a `catalog.refresh` when the catalog does not list it yet), and the
 * returned function puts the workspace's previous pin back once the turn was accepted (a turn keeps the
 * selection it was accepted with). Nothing is changed when the workspace already runs that model.
 */
export async function selectModel(
  wire: WireClient,
  workspace: string,
  model: string,
): Promise<() => Promise<void>> {
  const current = await call<SettingsView>(wire, 'settings.get', { workspace });
  if (current.effective.model === model) return async () => {};
  const pin = (value: string | null) =>
    call(wire, 'settings.update', { workspace, changes: { model: value } }, { operation: operationId() });
  try {
    await pin(model);
  } catch (error) {
    if (!(error instanceof WireCallError && error.code === 'conflict')) throw error;
    await call(wire, 'catalog.refresh', {}, { operation: operationId() });
    await pin(model);
  }
  const previous = current.project?.model ?? null;
  return async () => {
    await pin(previous);
  };
}
