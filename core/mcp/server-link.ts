import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** What differs between a child over stdio and a server over HTTP. */
export interface ServerLink {
  readonly transport: Transport;
  /** Whether the link was made at all: false for a command that could not be spawned. */
  readonly opened: boolean;
  /** The last lines the server wrote on stderr, secrets replaced; none over HTTP. */
  stderrLines(): string[];
  /** Ends the link; settles once it is gone (`closed`), or once waiting longer would not help. */
  stop(closed: Promise<void>, hasClosed: () => boolean): Promise<void>;
}
