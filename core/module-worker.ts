import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread running the ES module at `url`. From the compiled tree the module is JavaScript
 * and starts directly. From the TypeScript sources (tests, benches) the module loads through whatever
 * TypeScript hooks the worker inherits; Node 20 does not carry hooks registered with `--import` into
 * workers, so when the worker cannot load TypeScript it registers them itself and loads the module again:
 * the hooks module named by MAGID_TYPESCRIPT_HOOKS, which a process running under its own hooks sets
 * (the tests' do), else tsx's. `workerData` reaches the module as `workerData` of node:worker_threads either
 * way. `trackUnmanagedFds` is Node's: a thread that hands descriptors it opened to another must be started
 * without it, or its exit closes them by number, whatever they name by then.
 */
export function startModuleWorker(
  url: URL,
  workerData?: unknown,
  { trackUnmanagedFds = true }: { trackUnmanagedFds?: boolean } = {},
): Worker {
  const options: WorkerOptions =
    workerData === undefined ? { trackUnmanagedFds } : { workerData, trackUnmanagedFds };
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  const hooks = process.env.MAGID_TYPESCRIPT_HOOKS;
  const registerHooks =
    hooks === undefined
      ? `(await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})).register();`
      : `(await import('node:module')).register(${JSON.stringify(hooks)});`;
  const bootstrap = `
    import(${JSON.stringify(url.href)}).catch(async (error) => {
      if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
      ${registerHooks}
      return import(${JSON.stringify(`${url.href}?typescript`)});
    });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
