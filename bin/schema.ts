import { protocolDocumentText } from '../plugins/protocol-document.js';

/** `magid schema`: the wire as one JSON Schema document, generated from the routes (docs/protocol.schema.json). */
export async function schema(out: NodeJS.WritableStream = process.stdout): Promise<number> {
  out.write(await protocolDocumentText());
  return 0;
}
