/**
 * What the seccomp filter of every command refuses, as tables a reader can check line by line against
 * Docker's default profile (moby's `profiles/seccomp/default.json`). That profile allows a list of calls and
 * refuses the rest; this policy allows by default and refuses, on x86-64 and arm64, every call that profile
 * does not allow to a container without added capabilities, plus `io_uring_*` (which can open sockets
 * without passing through any filter). Calls that no longer exist in the kernel (`tuxcall`, `vserver`, …)
 * fail with ENOSYS anyway and are not listed. A command runs with every capability dropped, so most of
 * these would fail without the filter too: the filter keeps them from reaching the kernel code at all.
 */

export type SeccompArchitecture = 'x64' | 'arm64';

/** errno values of asm-generic/errno-base.h and errno.h (the same on both architectures). */
export const ERRNO = { EPERM: 1, ENOSYS: 38 } as const;
export type RefusalErrno = keyof typeof ERRNO;

/** A system call's number on each architecture (asm/unistd_64.h, asm-generic/unistd.h); null where it has none. */
export type SyscallNumbers = Readonly<Record<SeccompArchitecture, number | null>>;

/** How Docker's default profile treats a call for a container without added capabilities. */
export type DockerTreatment =
  /** allowed there only with the named capability */
  | `needs ${string}`
  /** not in its list at all */
  | 'not listed'
  /** allowed there; refused here for the reason given */
  | 'allowed';

export interface RefusedCall {
  name: string;
  numbers: SyscallNumbers;
  errno: RefusalErrno;
  docker: DockerTreatment;
}

const call = (
  name: string,
  x64: number | null,
  arm64: number | null,
  docker: DockerTreatment,
  errno: RefusalErrno = 'EPERM',
): RefusedCall => ({ name, numbers: { x64, arm64 }, errno, docker });

/** Refused whatever their arguments. */
export const REFUSED_CALLS: readonly RefusedCall[] = [
  // the kernel keyring is not namespaced: a command could read the user's keys
  call('add_key', 248, 217, 'not listed'),
  call('request_key', 249, 218, 'not listed'),
  call('keyctl', 250, 219, 'not listed'),
  // mounts, namespaces and the root
  call('mount', 165, 40, 'needs CAP_SYS_ADMIN'),
  call('umount2', 166, 39, 'needs CAP_SYS_ADMIN'),
  call('pivot_root', 155, 41, 'not listed'),
  call('chroot', 161, 51, 'needs CAP_SYS_CHROOT'),
  call('open_tree', 428, 428, 'needs CAP_SYS_ADMIN'),
  call('move_mount', 429, 429, 'needs CAP_SYS_ADMIN'),
  call('fsopen', 430, 430, 'needs CAP_SYS_ADMIN'),
  call('fsconfig', 431, 431, 'needs CAP_SYS_ADMIN'),
  call('fsmount', 432, 432, 'needs CAP_SYS_ADMIN'),
  call('fspick', 433, 433, 'needs CAP_SYS_ADMIN'),
  call('mount_setattr', 442, 442, 'needs CAP_SYS_ADMIN'),
  call('open_tree_attr', 467, 467, 'not listed'),
  call('unshare', 272, 97, 'needs CAP_SYS_ADMIN'),
  call('setns', 308, 268, 'needs CAP_SYS_ADMIN'),
  // clone3 takes its flags in memory, where a filter cannot read them: ENOSYS makes the C library fall back
  // to clone, whose flags are checked below
  call('clone3', 435, 435, 'needs CAP_SYS_ADMIN', 'ENOSYS'),
  // the machine itself: its name, clock, modules, kernel, swap, quotas, accounting and logs
  call('sethostname', 170, 161, 'needs CAP_SYS_ADMIN'),
  call('setdomainname', 171, 162, 'needs CAP_SYS_ADMIN'),
  call('settimeofday', 164, 170, 'needs CAP_SYS_TIME'),
  call('clock_settime', 227, 112, 'needs CAP_SYS_TIME'),
  call('reboot', 169, 142, 'needs CAP_SYS_BOOT'),
  call('init_module', 175, 105, 'needs CAP_SYS_MODULE'),
  call('finit_module', 313, 273, 'needs CAP_SYS_MODULE'),
  call('delete_module', 176, 106, 'needs CAP_SYS_MODULE'),
  call('create_module', 174, null, 'not listed'),
  call('get_kernel_syms', 177, null, 'not listed'),
  call('query_module', 178, null, 'not listed'),
  call('kexec_load', 246, 104, 'not listed'),
  call('kexec_file_load', 320, 294, 'not listed'),
  call('swapon', 167, 224, 'not listed'),
  call('swapoff', 168, 225, 'not listed'),
  call('quotactl', 179, 60, 'needs CAP_SYS_ADMIN'),
  call('quotactl_fd', 443, 443, 'needs CAP_SYS_ADMIN'),
  call('acct', 163, 89, 'needs CAP_SYS_PACCT'),
  call('syslog', 103, 116, 'needs CAP_SYSLOG'),
  call('vhangup', 153, 58, 'needs CAP_SYS_TTY_CONFIG'),
  call('iopl', 172, null, 'needs CAP_SYS_RAWIO'),
  call('ioperm', 173, null, 'needs CAP_SYS_RAWIO'),
  call('lookup_dcookie', 212, 18, 'needs CAP_SYS_ADMIN'),
  call('nfsservctl', 180, 42, 'not listed'),
  call('_sysctl', 156, null, 'not listed'),
  call('sysfs', 139, null, 'not listed'),
  call('ustat', 136, null, 'not listed'),
  call('uselib', 134, null, 'not listed'),
  // kernel attack surface: BPF programs, performance counters, page-fault handling, file handles
  call('bpf', 321, 280, 'needs CAP_BPF'),
  call('perf_event_open', 298, 241, 'needs CAP_PERFMON'),
  call('userfaultfd', 323, 282, 'not listed'),
  call('fanotify_init', 300, 262, 'needs CAP_SYS_ADMIN'),
  call('open_by_handle_at', 304, 265, 'needs CAP_DAC_READ_SEARCH'),
  // other processes' memory and descriptors, and memory placement
  call('kcmp', 312, 272, 'needs CAP_SYS_PTRACE'),
  call('pidfd_getfd', 438, 438, 'needs CAP_SYS_PTRACE'),
  call('process_madvise', 440, 440, 'needs CAP_SYS_PTRACE'),
  call('mbind', 237, 235, 'needs CAP_SYS_NICE'),
  call('set_mempolicy', 238, 237, 'needs CAP_SYS_NICE'),
  call('get_mempolicy', 239, 236, 'needs CAP_SYS_NICE'),
  call('set_mempolicy_home_node', 450, 450, 'needs CAP_SYS_NICE'),
  call('migrate_pages', 256, 238, 'not listed'),
  call('move_pages', 279, 239, 'not listed'),
  // io_uring performs socket, connect and open operations of its own, which no filter sees
  call('io_uring_setup', 425, 425, 'allowed'),
  call('io_uring_enter', 426, 426, 'allowed'),
  call('io_uring_register', 427, 427, 'allowed'),
];

/** Address families of linux/socket.h that a command may open: all it needs with no network but loopback. */
export const ALLOWED_SOCKET_FAMILIES: Readonly<Record<string, number>> = {
  AF_INET: 2,
  AF_INET6: 10,
  AF_NETLINK: 16,
};

/** linux/socket.h and linux/net.h */
export const AF_UNIX = 1;
export const SOCK_STREAM = 1;
/** SOCK_NONBLOCK and SOCK_CLOEXEC share the type argument; the type itself is its low four bits. */
export const SOCK_TYPE_MASK = 0xf;

/** linux/sched.h: every flag of clone that makes a new namespace (Docker's mask, 0x7e020000). */
export const CLONE_NAMESPACE_FLAGS =
  0x00020000 | // CLONE_NEWNS
  0x02000000 | // CLONE_NEWCGROUP
  0x04000000 | // CLONE_NEWUTS
  0x08000000 | // CLONE_NEWIPC
  0x10000000 | // CLONE_NEWUSER
  0x20000000 | // CLONE_NEWPID
  0x40000000; // CLONE_NEWNET

/** The personalities Docker allows (linux/personality.h): PER_LINUX, PER_LINUX32, UNAME26 with each, and the query. */
export const ALLOWED_PERSONALITIES: readonly number[] = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/**
 * Calls allowed only with some arguments (refused with EPERM otherwise). The argument each checks is an
 * int or unsigned int in the kernel, so only the low half of its register counts.
 */
export interface ArgumentRule {
  name: string;
  numbers: SyscallNumbers;
  docker: string;
}

export const ARGUMENT_RULES = {
  /** socket(domain, …): the families of ALLOWED_SOCKET_FAMILIES only. Docker refuses AF_VSOCK alone. */
  socket: { name: 'socket', numbers: { x64: 41, arm64: 198 }, docker: 'allowed but AF_VSOCK' },
  /**
   * socketpair(domain, type, …): AF_UNIX stream pairs only. An unbound datagram pair can `sendto()` any
   * datagram socket the filesystem shows (`/dev/log`, a notify socket), and a filter cannot read the address.
   */
  socketpair: { name: 'socketpair', numbers: { x64: 53, arm64: 199 }, docker: 'allowed' },
  /** clone(flags, …): no new namespace. */
  clone: { name: 'clone', numbers: { x64: 56, arm64: 220 }, docker: 'allowed without namespace flags' },
  /** personality(persona): the values of ALLOWED_PERSONALITIES. */
  personality: {
    name: 'personality',
    numbers: { x64: 135, arm64: 92 },
    docker: 'allowed for those values',
  },
} as const satisfies Record<string, ArgumentRule>;
