import { COMMAND_BOUNDS } from './command-limits.js';
import { isInside, type SandboxView } from './sandbox-view.js';
import { PROC_READ_ONLY } from './system-covers.js';
import type { SandboxPath, WorkspaceScan } from './workspace-scan.js';

/**
 * The descriptors bwrap reads its arguments and its seccomp program from and writes its status to (JSON
 * lines: the child's pid once it is made, its exit code once the command ran); the held paths follow.
 */
export const ARGUMENTS_FD = 3;
export const SECCOMP_FD = 4;
export const STATUS_FD = 5;
const FIRST_HELD_FD = 6;

export interface CommandMounts {
  view: SandboxView;
  scan: WorkspaceScan;
  /** Read-only empty sources bound over what is covered. */
  emptyFile: string;
  emptyDirectory: string;
  /** The real paths of the other live sessions' workspaces: each is emptied unless it lies in this one. */
  otherWorkspaces: readonly string[];
}

/** bwrap's options, passed on ARGUMENTS_FD so that none shows in a process list inside, and the held descriptors. */
export interface BwrapInvocation {
  /** The options, in order; paths are bytes, as the filesystem names them. */
  options: Array<string | SandboxPath>;
  /** The scan's descriptors, to be passed at FIRST_HELD_FD onwards, in this order. */
  heldFds: number[];
}

/**
 * The options of `bwrap` for one command. Mounts apply in order, and a bind of a host folder brings the
 * host's view of everything beneath it, so the order is what makes it safe:
 *
 * 1. the root read-only, a fresh /proc with the kernel's settings read-only and its sensitive files masked,
 *    and a fresh /dev;
 * 2. the emptied places (temporary and runtime folders, the user's home) that hold the workspace or lie
 *    apart from it, with the readable folders of the home bound back, then the other sessions' workspaces
 *    that hold this one or lie apart from it;
 * 3. the workspace, read-write, by the descriptor its scan checked;
 * 4. then everything that protects or hides, so that the workspace's bind uncovers nothing: the pins and
 *    read-only `.git` bindings (outermost first); the emptied places inside the workspace, after them, since
 *    a pin or a `.git` folder inside such a place brings the host's view of it back; the covers inside the
 *    workspace, then those outside it (the daemon's home, its socket's folder, credential files of the
 *    readable folders, the system's secrets), each only where an emptied place does not hide it already.
 */
export function bwrapArguments(mounts: CommandMounts): BwrapInvocation {
  const { view, scan } = mounts;
  const workspace = Buffer.from(scan.root.path).toString('utf8');
  const heldFds: number[] = [];
  const held = (fd: number): string => {
    heldFds.push(fd);
    return String(FIRST_HELD_FD + heldFds.length - 1);
  };
  const cover = (path: SandboxPath | string, kind: 'directory' | 'file'): Array<string | SandboxPath> => [
    '--ro-bind',
    kind === 'directory' ? mounts.emptyDirectory : mounts.emptyFile,
    path,
  ];
  const emptiedBefore = view.emptied.filter((place) => place !== workspace && !isInside(place, workspace));
  const emptiedAfter = view.emptied.filter((place) => isInside(place, workspace));
  const empty = (place: string): Array<string | SandboxPath> => [
    '--size',
    String(COMMAND_BOUNDS.tmpfs_bytes),
    '--tmpfs',
    place,
    ...view.readable
      .filter(({ path }) => isInside(path, place))
      .flatMap(({ source, path }) => ['--ro-bind', source, path]),
  ];
  return {
    options: [
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      ...PROC_READ_ONLY.flatMap((path) => ['--ro-bind-try', path, path]),
      ...view.system.masked.flatMap((entry) => cover(entry.path, entry.kind)),
      '--dev',
      '/dev',
      ...emptiedBefore.flatMap(empty),
      ...otherWorkspaces(view, workspace, mounts.otherWorkspaces).flatMap((place) => [
        '--size',
        String(COMMAND_BOUNDS.tmpfs_bytes),
        '--tmpfs',
        place,
      ]),
      '--bind-fd',
      held(scan.root.fd),
      scan.root.path,
      ...scan.pins.flatMap((pin) => ['--bind-fd', held(pin.fd), pin.path]),
      ...scan.readOnly.flatMap((entry) => ['--ro-bind-fd', held(entry.fd), entry.path]),
      ...emptiedAfter.flatMap(empty),
      ...outermostCovers(view, scan).flatMap((entry) => cover(entry.path, entry.kind)),
      '--unshare-net',
      '--unshare-pid',
      '--unshare-ipc',
      // A hostname of its own: a root command could otherwise rename the machine.
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--die-with-parent',
      '--new-session',
      // Run as root, bwrap keeps every capability, and with CAP_SYS_ADMIN a command can remount the root
      // read-write.
      '--cap-drop',
      'ALL',
      '--seccomp',
      String(SECCOMP_FD),
      '--json-status-fd',
      String(STATUS_FD),
      '--clearenv',
      '--setenv',
      'PATH',
      view.commandPath,
      '--setenv',
      'HOME',
      view.userHome ?? workspace,
      '--setenv',
      'LANG',
      'C.UTF-8',
      '--setenv',
      'TERM',
      'dumb',
      '--chdir',
      scan.root.path,
    ],
    heldFds,
  };
}

/**
 * The other sessions' workspaces to empty, outermost only: not this one, nothing inside it, nothing an
 * emptied place hides already (unless a readable folder shows it again).
 */
function otherWorkspaces(view: SandboxView, workspace: string, others: readonly string[]): string[] {
  // A readable folder bound from elsewhere shows what lies in its source under its own path too.
  const aliases = others.flatMap((place) =>
    view.readable
      .filter(({ source, path }) => source !== path && (place === source || isInside(place, source)))
      .map(({ source, path }) => path + place.slice(source.length)),
  );
  const shown = [...others, ...aliases].filter(
    (place) =>
      place !== workspace &&
      !isInside(place, workspace) &&
      !(
        view.emptied.some((emptied) => emptied === place || isInside(place, emptied)) &&
        !view.readable.some((folder) => folder.path === place || isInside(place, folder.path))
      ),
  );
  const unique = [...new Set(shown)];
  return unique.filter((place) => !unique.some((other) => other !== place && isInside(place, other)));
}

/**
 * The covers inside the workspace, then those outside it, without any that an emptied place hides already
 * (a bind there would only make an empty entry of its name) or that lies inside another cover or is the
 * same: a cover is an empty read-only folder, where nothing could be mounted.
 */
function outermostCovers(
  view: SandboxView,
  scan: WorkspaceScan,
): Array<{ path: SandboxPath; kind: 'directory' | 'file' }> {
  // Compared as the bytes they are: a name that is not UTF-8 stays itself.
  const key = (path: string | SandboxPath): string => Buffer.from(path).toString('latin1');
  const workspace = key(scan.root.path);
  const emptied = view.emptied.map(key);
  const readable = view.readable.map((entry) => key(entry.path));
  const inWorkspace = (path: string): boolean => path === workspace || isInside(path, workspace);
  // A place inside the workspace is emptied after everything in it; one around it or apart from it before it,
  // so the workspace's bind shows what the place holds of the workspace. A readable folder is bound back.
  const hidden = (path: string): boolean =>
    emptied.some((place) => isInside(path, place) && (isInside(place, workspace) || !inWorkspace(path))) &&
    !readable.some((folder) => isInside(path, folder));
  const all = [
    ...scan.covers,
    ...[...scan.outside, ...view.system.secrets].map((entry) => ({
      path: Buffer.from(entry.path),
      kind: entry.kind,
    })),
  ].filter((entry) => !hidden(key(entry.path)));
  const folders = all.filter((entry) => entry.kind === 'directory').map((entry) => key(entry.path));
  const seen = new Set<string>();
  return all.filter((entry) => {
    const path = key(entry.path);
    if (seen.has(path) || folders.some((folder) => isInside(path, folder))) return false;
    seen.add(path);
    return true;
  });
}

/** The options as bwrap reads them from a descriptor: each followed by a NUL. */
export function encodeOptions(options: ReadonlyArray<string | SandboxPath>): Buffer {
  return Buffer.concat(options.flatMap((option) => [Buffer.from(option), Buffer.from([0])]));
}
