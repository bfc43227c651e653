import { newId } from '../ids.js';
import { type CapturedContent, validateCapturedSource } from '../resources/captured-source.js';
import type { ResourceKind } from '../resources/names.js';
import type { ResourceInput } from '../resources/resource-input.js';
import { contentSha256, type DescriptorHashes, revisionSha256 } from '../resources/revision-hash.js';
import { contractJsonBytes, type ToolContract } from '../resources/tool-contract.js';
import { utf8ByteLength } from '../resources/unicode.js';
import { revisionBytes } from './registry-accounting.js';

/** Which connection action registered a revision; it identifies an action, not a verified person. */
export interface RegisteredBy {
  readonly instance_id: string;
  readonly connection_id: string;
  readonly operation_id: string;
  readonly grant_generation: number;
}

/** What clients see of a resource revision: never a body, a path or a secret. */
export interface ResourceDescriptor {
  readonly resource_id: string;
  readonly revision_id: string;
  readonly kind: ResourceKind;
  readonly name: string;
  readonly description: string;
  readonly content_sha256: string;
  readonly revision_sha256: string;
  readonly captured_bytes: number;
  readonly registered_by: RegisteredBy;
}

export interface CaptureRevisionInput {
  /** The resource id: the existing one for a replacement, a fresh one for a creation. */
  resourceId: string;
  input: ResourceInput;
  /**
   * The exact captured source bytes, which the revision keeps: the caller hands over a buffer of its own
   * that nothing writes to afterwards (the capture's or an inline source's encoding), so it is not copied.
   */
  captured: Buffer;
  /** The captured bytes decoded, when the capture already decoded them exactly. */
  text?: string;
  /** The content rules' result for these bytes, when the caller applied them already. */
  content?: CapturedContent;
  /** Both descriptor hashes of these bytes, when the capture computed them already. */
  hashes?: DescriptorHashes;
  registeredBy: RegisteredBy;
}

/**
 * One immutable resource revision: its descriptor, its normalized content (tool contract or instruction
 * text) and the exact captured bytes. A registry and every turn snapshot that pinned it share this one
 * object, so a revision's bytes are charged once however many hold it.
 */
export class ResourceRevision {
  readonly descriptor: ResourceDescriptor;
  readonly content: CapturedContent;
  /** The revision's whole charge; see registry-accounting.ts. */
  readonly chargedBytes: number;
  readonly #captured: Buffer;

  private constructor(descriptor: ResourceDescriptor, content: CapturedContent, captured: Buffer) {
    this.descriptor = descriptor;
    this.content = content;
    this.#captured = captured;
    this.chargedBytes = revisionBytes({
      capturedBytes: captured.length,
      normalizedBytes: normalizedBytes(content),
      descriptorBytes: utf8ByteLength(JSON.stringify(descriptor)),
    });
    Object.freeze(this);
  }

  /**
   * Applies the content rules to the captured bytes (refusing with `invalid_payload`) and mints a fresh
   * revision id.
   */
  static capture({
    resourceId,
    input,
    captured,
    text,
    content = validateCapturedSource(input.kind, captured, text),
    hashes,
    registeredBy,
  }: CaptureRevisionInput): ResourceRevision {
    const { kind, name, description } = input;
    const descriptor: ResourceDescriptor = Object.freeze({
      resource_id: resourceId,
      revision_id: newId('rev'),
      kind,
      name,
      description,
      content_sha256: hashes?.contentSha256 ?? contentSha256(captured),
      revision_sha256: hashes?.revisionSha256 ?? revisionSha256({ kind, name, description, captured }),
      captured_bytes: captured.length,
      registered_by: Object.freeze({
        instance_id: registeredBy.instance_id,
        connection_id: registeredBy.connection_id,
        operation_id: registeredBy.operation_id,
        grant_generation: registeredBy.grant_generation,
      }),
    });
    return new ResourceRevision(descriptor, content, captured);
  }

  get resourceId(): string {
    return this.descriptor.resource_id;
  }

  get revisionId(): string {
    return this.descriptor.revision_id;
  }

  get kind(): ResourceKind {
    return this.descriptor.kind;
  }

  get name(): string {
    return this.descriptor.name;
  }

  /** The tool's normalized contract; null for a skill. */
  get contract(): ToolContract | null {
    return this.content.kind === 'tool' ? this.content.contract : null;
  }

  /** The skill's instruction text; null for a tool. */
  get instructions(): string | null {
    return this.content.kind === 'skill' ? this.content.instructions : null;
  }

  /** UTF-8 length of the instruction text; 0 for a tool. */
  get instructionBytes(): number {
    return this.content.kind === 'skill' ? this.#captured.length : 0;
  }

  /** A copy of the exact captured bytes, so no holder can change what another sees. */
  capturedBytes(): Buffer {
    return Buffer.from(this.#captured);
  }
}

function normalizedBytes(content: CapturedContent): number {
  return content.kind === 'tool' ? contractJsonBytes(content.contract) : utf8ByteLength(content.instructions);
}

/** Kind first, then name: the order of listings, snapshots and manifests. */
export function compareByKindThenName(a: ResourceDescriptor, b: ResourceDescriptor): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return 0;
}
