import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export class SandboxClosed extends Error {
  constructor() {
    super('the sandbox is closed');
    this.name = 'SandboxClosed';
  }
}

/**
 * A read-only empty file in a private temporary directory, bound over hidden files. It is made when first
 * needed and removed on close.
 */
export class EmptyFile {
  #creating: Promise<string> | undefined;
  #closed = false;

  path(): Promise<string> {
    if (this.#closed) return Promise.reject(new SandboxClosed());
    if (this.#creating === undefined) {
      const creating = create();
      this.#creating = creating;
      // A failed attempt is not kept, so the next command tries again.
      creating.catch(() => {
        if (this.#creating === creating) this.#creating = undefined;
      });
    }
    return this.#creating;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const creating = this.#creating;
    this.#creating = undefined;
    const path = await creating?.catch(() => null);
    if (path) await rm(dirname(path), { recursive: true, force: true });
  }
}

async function create(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'magi-sandbox-'));
  const path = join(directory, 'empty');
  await writeFile(path, '', { mode: 0o444 });
  return path;
}
