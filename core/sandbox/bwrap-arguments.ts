import type { HiddenEntry, SandboxLayout } from './sandbox-layout.js';

/** The search path of every command; with HOME, LANG and TERM it is all of the environment a command gets. */
export const COMMAND_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The argument list of `bwrap` for one command. Mounts apply in order, so the fresh /tmp comes before the
 * workspace (which may lie under /tmp), hidden paths around the workspace before it and those inside it
 * after it. `emptyFile` is the read-only source that covers hidden files; it is needed only when there are
 * any.
 */
export function bwrapArguments(layout: SandboxLayout, emptyFile: string | null, command: string): string[] {
  const cover = (entry: HiddenEntry): string[] => {
    if (entry.kind === 'directory') return ['--tmpfs', entry.path];
    if (emptyFile === null) throw new Error('a hidden file needs an empty file to cover it');
    return ['--ro-bind', emptyFile, entry.path];
  };
  const { workspace } = layout;
  return [
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    ...layout.hiddenAround.flatMap(cover),
    '--bind',
    workspace,
    workspace,
    ...layout.hiddenWithin.flatMap(cover),
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--die-with-parent',
    '--new-session',
    // Run as root, bwrap keeps every capability, and with CAP_SYS_ADMIN a command can remount the root
    // read-write.
    '--cap-drop',
    'ALL',
    '--clearenv',
    '--setenv',
    'PATH',
    COMMAND_PATH,
    '--setenv',
    'HOME',
    workspace,
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--setenv',
    'TERM',
    'dumb',
    '--chdir',
    workspace,
    '--',
    '/bin/sh',
    '-c',
    command,
  ];
}

export function needsEmptyFile(layout: SandboxLayout): boolean {
  return [...layout.hiddenAround, ...layout.hiddenWithin].some((entry) => entry.kind === 'file');
}
