import { createHash } from 'node:crypto';
import type { ResponseFrame, WireClient } from '../../client/wire-client.js';
import { claimedSession, op, type TestDaemon, type Transport } from '../helpers/daemon.js';

export {
  fileResource,
  skillResource,
  TOOL_CONTRACT,
  toolResource,
} from '../core/registry/registry-fixture.js';

export const FIFTEEN_MINUTES = 900_000;

/** What clients see of a resource revision. */
export interface Descriptor {
  resource_id: string;
  revision_id: string;
  kind: 'tool' | 'skill';
  name: string;
  description: string;
  content_sha256: string;
  revision_sha256: string;
  captured_bytes: number;
  registered_by: {
    instance_id: string;
    connection_id: string;
    operation_id: string;
    grant_generation: number;
  };
}

export interface Registered {
  entry: Descriptor;
  registry_revision: string;
}

export interface Listing {
  registry_revision: string;
  entries: Descriptor[];
}

export const DESCRIPTOR_MEMBERS = [
  'captured_bytes',
  'content_sha256',
  'description',
  'kind',
  'name',
  'registered_by',
  'resource_id',
  'revision_id',
  'revision_sha256',
];

/** A connection that controls a session, with everything a test compares attribution against. */
export interface Controller {
  client: WireClient;
  session: string;
  control: string;
  generation: number;
  connectionId: string;
  instanceId: string;
}

/** A new profile connection controlling a new session over `workspace` (the daemon's by default). */
export async function controller(
  daemon: TestDaemon,
  transport: Transport,
  workspace = daemon.workspace,
): Promise<Controller> {
  const client = await daemon.open(transport);
  const init = await client.initialize();
  const claimed = await claimedSession(client, workspace);
  return {
    client,
    session: claimed.session,
    control: claimed.control,
    generation: claimed.generation,
    connectionId: init.connection_id as string,
    instanceId: init.instance_id as string,
  };
}

/** Claims `session` on `client`, which may be a takeover. */
export async function claim(
  client: WireClient,
  session: string,
): Promise<{ control: string; generation: number }> {
  const claimed = await client.call('session.claim', {}, { session, operation: op() });
  return { control: claimed.control_token as string, generation: claimed.grant_generation as number };
}

/** The session's current controller as `client` after a claim there. */
export async function takeOver(
  daemon: TestDaemon,
  transport: Transport,
  of: Controller,
): Promise<Controller> {
  const client = await daemon.open(transport);
  const init = await client.initialize();
  const claimed = await claim(client, of.session);
  return {
    client,
    session: of.session,
    ...claimed,
    connectionId: init.connection_id as string,
    instanceId: init.instance_id as string,
  };
}

/** The four registry methods as `who` calls them; mutations with a fresh operation id unless given one. */
export function registryOf(who: Controller) {
  const envelope = (operation: string | null) => ({ session: who.session, control: who.control, operation });
  return {
    list: () => who.client.request('session.resources.list', {}, envelope(null)),
    register: (resource: unknown, expectedRevision: string | null = null, operation = op()) =>
      who.client.request(
        'session.resources.register',
        { expected_revision: expectedRevision, resource } as Record<string, unknown>,
        envelope(operation),
      ),
    unregister: (resourceId: string, expectedRevision: string, operation = op()) =>
      who.client.request(
        'session.resources.unregister',
        { resource_id: resourceId, expected_revision: expectedRevision },
        envelope(operation),
      ),
    clear: (expectedRegistryRevision: string, operation = op()) =>
      who.client.request(
        'session.resources.clear',
        { expected_registry_revision: expectedRegistryRevision },
        envelope(operation),
      ),
  };
}

/** The result of a response that must have succeeded. */
export function resultOf<T>(frame: ResponseFrame): T {
  if (!frame.ok) throw new Error(`expected success, got ${frame.error?.code}`);
  return frame.result as T;
}

/** The wire error code of a response, or 'ok'. */
export function codeOf(frame: ResponseFrame): string {
  return frame.ok ? 'ok' : (frame.error?.code ?? 'unknown');
}

export async function listed(who: Controller): Promise<Listing> {
  return resultOf<Listing>(await registryOf(who).list());
}

export async function registered(
  who: Controller,
  resource: unknown,
  expectedRevision: string | null = null,
): Promise<Registered> {
  return resultOf<Registered>(await registryOf(who).register(resource, expectedRevision));
}

/** SHA-256 of the exact bytes, computed here independently of the daemon. */
export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The revision hash by the spec's preimage rule: the raw domain, then kind, name, description and the
 * captured bytes, each preceded by its byte length as an unsigned 64-bit big-endian integer.
 */
export function expectedRevisionSha256(
  kind: string,
  name: string,
  description: string,
  captured: Buffer | string,
): string {
  const field = (value: Buffer | string) => {
    const bytes = Buffer.from(value);
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    return [length, bytes];
  };
  return sha256Hex(
    Buffer.concat([
      Buffer.from('magi-application-resource-v1', 'utf8'),
      ...field(kind),
      ...field(name),
      ...field(description),
      ...field(captured),
    ]),
  );
}

/** Waits (in real time) until `condition` holds: socket closes reach the daemon asynchronously. */
export async function until(condition: () => boolean, what = 'condition'): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Everything `client` has received, as one text, for privacy checks. */
export function everythingReceived(client: WireClient): string {
  return client.received.join('\n');
}
