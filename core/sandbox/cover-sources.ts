import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export class SandboxClosed extends Error {
  constructor() {
    super('the sandbox is closed');
    this.name = 'SandboxClosed';
  }
}

/** The read-only empty file and folder bound over whatever a command must not see. */
export interface Covers {
  file: string;
  directory: string;
}

/**
 * The covers, made in a private folder of `parent` when first needed and removed on close. The parent is the
 * daemon's own (its home's `run/sandbox`), so that a daemon killed before it could close leaves nothing
 * behind for long: every start empties that folder.
 */
export class CoverSources {
  readonly #parent: string;
  #creating: Promise<Covers> | undefined;
  #closed = false;

  constructor(parent: string) {
    this.#parent = parent;
  }

  /** Removes what an earlier daemon of this home left; before any command runs. */
  async sweep(): Promise<void> {
    await rm(this.#parent, { recursive: true, force: true });
  }

  paths(): Promise<Covers> {
    if (this.#closed) return Promise.reject(new SandboxClosed());
    if (this.#creating === undefined) {
      const creating = this.#create();
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
    const covers = await creating?.catch(() => null);
    if (covers) await rm(join(covers.directory, '..'), { recursive: true, force: true });
  }

  async #create(): Promise<Covers> {
    await mkdir(this.#parent, { recursive: true, mode: 0o700 });
    const root = await mkdtemp(join(this.#parent, 'covers-'));
    const file = join(root, 'empty-file');
    const directory = join(root, 'empty-directory');
    await writeFile(file, '', { mode: 0o444 });
    await mkdir(directory, { mode: 0o555 });
    return { file, directory };
  }
}
