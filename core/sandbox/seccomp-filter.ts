/**
 * The seccomp program every command runs under, as the classic BPF bytes `bwrap --seccomp FD` loads. It
 * makes `socket(AF_UNIX, …)` fail with EPERM, so that no command can connect to a Unix socket (the daemon's
 * own, a session bus, a container engine's) whatever the filesystem lets it see, and `io_uring_setup` fail
 * the same way, since io_uring can open sockets without passing through this filter. Everything else is
 * allowed: the filter confines where a command can reach, not what it can compute.
 *
 * A filter must check the architecture the call was made in: system call numbers differ between them, and
 * an x86-64 process can enter the kernel as i386 or x32, where `socket` has another number. So each
 * supported architecture gets a program of its own that kills a process calling in any other ABI.
 */

export type SeccompArchitecture = 'x64' | 'arm64';

/** The architectures the filter is written for, by `process.arch`; on others `run_command` is unavailable. */
export function seccompArchitecture(arch: string): SeccompArchitecture | null {
  return arch === 'x64' || arch === 'arm64' ? arch : null;
}

interface Abi {
  /** AUDIT_ARCH_* of linux/audit.h. */
  audit: number;
  socket: number;
  ioUringSetup: number;
  /** x32 system calls are x86-64 ones with this bit set; null where there is no such ABI. */
  x32Bit: number | null;
}

const ABIS: Readonly<Record<SeccompArchitecture, Abi>> = {
  x64: { audit: 0xc000003e, socket: 41, ioUringSetup: 425, x32Bit: 0x40000000 },
  arm64: { audit: 0xc00000b7, socket: 198, ioUringSetup: 425, x32Bit: null },
};

// linux/filter.h and linux/seccomp.h
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const AF_UNIX = 1;
// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]. Both architectures
// are little-endian, so the low half of args[0] (socket's domain, an int) is at offset 16.
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const load = (offset: number): Instruction => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (value: number): Instruction => ({ code: BPF_RET_K, jt: 0, jf: 0, k: value });

/** The program for `arch`, eight bytes per instruction in the host's byte order (struct sock_filter). */
export function unixSocketFilter(arch: SeccompArchitecture): Buffer {
  const abi = ABIS[arch];
  const deny = ret(SECCOMP_RET_ERRNO | EPERM);
  const allow = ret(SECCOMP_RET_ALLOW);
  // Jumps are relative to the next instruction, so each is written against the tail it skips to: the
  // program ends with [check the domain, allow, deny], and `toTail(i, n)` jumps from instruction i to the
  // n-th instruction of that tail.
  const head: Instruction[] = [load(OFFSET_ARCH), { code: BPF_JEQ_K, jt: 1, jf: 0, k: abi.audit }];
  head.push(ret(SECCOMP_RET_KILL_PROCESS), load(OFFSET_NR));
  const checks: Array<{ code: number; k: number; to: 'domain' | 'deny' }> = [];
  if (abi.x32Bit !== null) checks.push({ code: BPF_JSET_K, k: abi.x32Bit, to: 'deny' });
  checks.push({ code: BPF_JEQ_K, k: abi.socket, to: 'domain' });
  checks.push({ code: BPF_JEQ_K, k: abi.ioUringSetup, to: 'deny' });
  const tail: Instruction[] = [
    // after the checks: an allowed call
    allow,
    // 'domain': socket(2) is denied for AF_UNIX only
    load(OFFSET_ARG0_LOW),
    { code: BPF_JEQ_K, jt: 1, jf: 0, k: AF_UNIX },
    allow,
    // 'deny'
    deny,
  ];
  const targetInTail = { domain: 1, deny: 4 } as const;
  const program = [...head];
  checks.forEach((check, index) => {
    const remainingChecks = checks.length - index - 1;
    program.push({ code: check.code, jt: remainingChecks + targetInTail[check.to], jf: 0, k: check.k });
  });
  program.push(...tail);
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((instruction, index) => {
    const at = index * 8;
    bytes.writeUInt16LE(instruction.code, at);
    bytes.writeUInt8(instruction.jt, at + 2);
    bytes.writeUInt8(instruction.jf, at + 3);
    bytes.writeUInt32LE(instruction.k >>> 0, at + 4);
  });
  return bytes;
}
