import { readFileSync } from 'node:fs';
import t from 'tap';
import { ownFolder } from '../../../core/confinement/confined-workspace.js';
import { commandSeccompProgram, seccompArchitecture } from '../../../core/sandbox/seccomp-filter.js';
import {
  ALLOWED_SOCKET_FAMILIES,
  ARGUMENT_RULES,
  REFUSED_CALLS,
  type SeccompArchitecture,
} from '../../../core/sandbox/seccomp-policy.js';
import {
  neverAborted,
  rootDirectory,
  sandboxUnavailable,
  testSandbox,
} from '../../helpers/sandbox-machine.js';

// linux/filter.h, linux/seccomp.h, linux/audit.h
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const ALU_AND_K = 0x54;
const RET_K = 0x06;
const KILL_PROCESS = 0x80000000;
const ERRNO_EPERM = 0x00050001;
const ALLOW = 0x7fff0000;
const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7, i386: 0x40000003 } as const;
const X32_BIT = 0x40000000;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** struct sock_filter, eight bytes each, little-endian as both architectures are. */
function decode(program: Buffer): Instruction[] {
  const instructions: Instruction[] = [];
  for (let at = 0; at < program.length; at += 8) {
    instructions.push({
      code: program.readUInt16LE(at),
      jt: program.readUInt8(at + 2),
      jf: program.readUInt8(at + 3),
      k: program.readUInt32LE(at + 4),
    });
  }
  return instructions;
}

const ld = (k: number): Instruction => ({ code: LD_W_ABS, jt: 0, jf: 0, k });
const ret = (k: number): Instruction => ({ code: RET_K, jt: 0, jf: 0, k });
const jeq = (k: number, jt: number, jf = 0): Instruction => ({ code: JEQ_K, jt, jf, k });

interface Call {
  arch: number;
  nr: number;
  args?: bigint[];
}

/** struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]. */
function seccompData({ arch, nr, args = [] }: Call): Buffer {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch, 4);
  args.forEach((arg, index) => {
    data.writeBigUInt64LE(arg, 16 + index * 8);
  });
  return data;
}

/**
 * Runs the program as the kernel would on one call, refusing what its verifier refuses: a jump out of the
 * program, a load outside seccomp_data, an instruction it does not know, or running off the end.
 */
function evaluate(program: Instruction[], call: Call): number {
  const data = seccompData(call);
  let accumulator = 0;
  for (let pc = 0; pc < program.length; pc += 1) {
    const { code, jt, jf, k } = program[pc]!;
    if (code === RET_K) return k;
    if (code === LD_W_ABS) {
      if (k % 4 !== 0 || k + 4 > data.length) throw new Error(`load at ${k}`);
      accumulator = data.readUInt32LE(k);
      continue;
    }
    if (code === ALU_AND_K) {
      accumulator = (accumulator & k) >>> 0;
      continue;
    }
    if (code !== JEQ_K && code !== JSET_K) throw new Error(`unknown instruction ${code}`);
    const taken = code === JEQ_K ? accumulator === k : (accumulator & k) !== 0;
    const skip = taken ? jt : jf;
    if (pc + 1 + skip >= program.length) throw new Error(`jump from ${pc} leaves the program`);
    pc += skip;
  }
  throw new Error('the program runs off its end');
}

t.test('the architectures with a program, by process.arch', async (t) => {
  t.equal(seccompArchitecture('x64'), 'x64');
  t.equal(seccompArchitecture('arm64'), 'arm64');
  for (const other of ['ia32', 'arm', 'riscv64', 'ppc64', 's390x', 'loong64', 'x32', '', 'X64']) {
    t.equal(seccompArchitecture(other), null, JSON.stringify(other));
  }
});

const ERRNO_ENOSYS = 0x00050026;

t.test('the x64 program begins with the architecture and x32 checks', async (t) => {
  const program = decode(commandSeccompProgram('x64'));
  t.equal(
    commandSeccompProgram('x64').subarray(0, 8).toString('hex'),
    '2000000004000000',
    'struct sock_filter, little-endian',
  );
  t.same(program.slice(0, 6), [
    ld(4), // arch
    jeq(AUDIT_ARCH.x64, 1), // skips the kill
    ret(KILL_PROCESS), // any other ABI: i386 entered from an x86-64 process
    ld(0), // nr
    { code: JSET_K, jt: 0, jf: 1, k: X32_BIT }, // an x32 call
    ret(ERRNO_EPERM),
  ]);
  t.same(program.at(-1), ret(ALLOW), 'everything not refused is allowed');
});

t.test('the arm64 program has no x32 check: arm64 has no such ABI', async (t) => {
  const program = decode(commandSeccompProgram('arm64'));
  t.same(program.slice(0, 4), [ld(4), jeq(AUDIT_ARCH.arm64, 1), ret(KILL_PROCESS), ld(0)]);
  t.notOk(program.some((instruction) => instruction.code === JSET_K));
});

/** The numbers of the kernel's own headers, by name: an independent check of the policy's tables. */
function headerNumbers(path: string, prefix: RegExp): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const match of readFileSync(path, 'utf8').matchAll(
    new RegExp(`^#define ${prefix.source}([a-z0-9_]+)\\s+(\\d+)\\s*$`, 'gm'),
  )) {
    numbers.set(match[1]!, Number(match[2]));
  }
  return numbers;
}

t.test('every number of the policy is the kernel headers’ number for its name', async (t) => {
  const headers: Record<SeccompArchitecture, Map<string, number>> = {
    x64: headerNumbers('/usr/include/x86_64-linux-gnu/asm/unistd_64.h', /__NR_/),
    arm64: headerNumbers('/usr/include/asm-generic/unistd.h', /__NR(?:3264)?_/),
  };
  // Newer than the headers of this machine's C library (Linux 6.15).
  const newer = new Map([['open_tree_attr', 467]]);
  const all = [...REFUSED_CALLS, ...Object.values(ARGUMENT_RULES)];
  for (const architecture of ['x64', 'arm64'] as const) {
    for (const { name, numbers } of all) {
      const expected = headers[architecture].get(name) ?? newer.get(name) ?? null;
      t.equal(numbers[architecture], expected, `${architecture} ${name}`);
    }
  }
});

t.test('docs/sandbox.md lists every call the policy refuses and every family it allows', async (t) => {
  const docs = readFileSync(new URL('../../../docs/sandbox.md', import.meta.url), 'utf8');
  for (const { name } of [...REFUSED_CALLS, ...Object.values(ARGUMENT_RULES)]) {
    t.ok(docs.includes(`\`${name}\``), name);
  }
  for (const family of Object.keys(ALLOWED_SOCKET_FAMILIES)) t.ok(docs.includes(`\`${family}\``), family);
});

const COMMON: Record<SeccompArchitecture, Record<string, number>> = {
  x64: {
    read: 0,
    write: 1,
    openat: 257,
    connect: 42,
    sendto: 44,
    sendmsg: 46,
    execve: 59,
    ptrace: 101,
    prctl: 157,
  },
  arm64: {
    read: 63,
    write: 64,
    openat: 56,
    connect: 203,
    sendto: 206,
    sendmsg: 211,
    execve: 221,
    ptrace: 117,
    prctl: 167,
  },
};

for (const architecture of ['x64', 'arm64'] as const) {
  t.test(`the ${architecture} program decides each call as the policy says`, async (t) => {
    const program = decode(commandSeccompProgram(architecture));
    const arch = AUDIT_ARCH[architecture];
    const verdict = (nr: number, args: bigint[] = []) => evaluate(program, { arch, nr, args });
    const number = (rule: keyof typeof ARGUMENT_RULES) => ARGUMENT_RULES[rule].numbers[architecture];
    for (const refused of REFUSED_CALLS) {
      const nr = refused.numbers[architecture];
      if (nr === null) continue;
      t.equal(
        verdict(nr, [0n, 0n]),
        refused.errno === 'ENOSYS' ? ERRNO_ENOSYS : ERRNO_EPERM,
        `${refused.name} fails ${refused.errno}`,
      );
    }
    for (const [name, nr] of Object.entries(COMMON[architecture])) {
      t.equal(verdict(nr, [1n, 2n]), ALLOW, `${name} is allowed, even with AF_UNIX as its first argument`);
    }

    const socket = number('socket')!;
    for (const family of [2n, 10n, 16n, 0xffff_ffff_0000_0002n]) {
      t.equal(verdict(socket, [family, 1n, 0n]), ALLOW, `socket(${family}) is allowed`);
    }
    // AF_UNSPEC, AF_UNIX, AF_PACKET, AF_BLUETOOTH, AF_ALG, AF_VSOCK, AF_XDP
    for (const family of [0n, 1n, 17n, 31n, 38n, 40n, 44n, 0x1_0000_0001n]) {
      t.equal(verdict(socket, [family, 1n, 0n]), ERRNO_EPERM, `socket(${family}) fails EPERM`);
    }
    const socketpair = number('socketpair')!;
    // SOCK_STREAM alone, with SOCK_NONBLOCK, with SOCK_CLOEXEC
    for (const type of [1n, 0x801n, 0x80001n]) {
      t.equal(verdict(socketpair, [1n, type, 0n]), ALLOW, `socketpair(AF_UNIX, ${type})`);
    }
    // SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW, a datagram with flags
    for (const type of [2n, 5n, 3n, 0x80002n]) {
      t.equal(verdict(socketpair, [1n, type, 0n]), ERRNO_EPERM, `socketpair(AF_UNIX, ${type}) fails`);
    }
    t.equal(verdict(socketpair, [2n, 1n, 0n]), ERRNO_EPERM, 'socketpair of another family fails');
    const clone = number('clone')!;
    // SIGCHLD; CLONE_VM|CLONE_VFORK|SIGCHLD; a thread
    for (const flags of [0x11n, 0x4111n, 0x3d0f00n]) {
      t.equal(verdict(clone, [flags]), ALLOW, `clone(${flags.toString(16)})`);
    }
    for (const flag of [
      0x20000n,
      0x2000000n,
      0x4000000n,
      0x8000000n,
      0x10000000n,
      0x20000000n,
      0x40000000n,
    ]) {
      t.equal(verdict(clone, [flag | 0x11n]), ERRNO_EPERM, `clone with namespace flag ${flag.toString(16)}`);
    }
    const personality = number('personality')!;
    for (const persona of [0n, 8n, 0x20000n, 0x20008n, 0xffffffffn]) {
      t.equal(verdict(personality, [persona]), ALLOW, `personality(${persona.toString(16)})`);
    }
    // ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC
    for (const persona of [0x40000n, 0x400000n]) {
      t.equal(verdict(personality, [persona]), ERRNO_EPERM, `personality(${persona.toString(16)}) fails`);
    }

    for (const other of [AUDIT_ARCH.i386, architecture === 'x64' ? AUDIT_ARCH.arm64 : AUDIT_ARCH.x64, 0]) {
      t.equal(
        evaluate(program, { arch: other, nr: socket, args: [2n] }),
        KILL_PROCESS,
        `arch ${other.toString(16)} is killed`,
      );
    }
    if (architecture === 'x64') {
      for (const nr of [socket, 0, 1, 512, 547]) {
        t.equal(verdict(X32_BIT | nr, [2n]), ERRNO_EPERM, `x32 call ${nr} fails EPERM`);
      }
    }
  });
}

t.test('inside the real sandbox', { skip: sandboxUnavailable ?? false }, async (t) => {
  const sandbox = await testSandbox(t);
  const workspace = await rootDirectory(t);
  const script = `
import ctypes, errno, os, socket, subprocess
def attempt(name, make):
    try:
        made = make()
        print(name, "ok")
        for item in (made if isinstance(made, tuple) else (made,)):
            item.close()
    except OSError as error:
        print(name, errno.errorcode[error.errno])
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("unix-datagram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("inet6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM))
attempt("packet", lambda: socket.socket(17, socket.SOCK_RAW))
attempt("socketpair", lambda: socket.socketpair(socket.AF_UNIX))
attempt("socketpair-datagram", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("socketpair-seqpacket", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = ${JSON.stringify(LIVE_NUMBERS[(seccompArchitecture(process.arch) ?? 'x64') as SeccompArchitecture])}
def raw(name, *args):
    result = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(arg) for arg in args])
    print(name, "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()])
raw("io_uring_setup", 1, 0)
raw("keyctl", 0, -4, 0)
raw("add_key", 0, 0, 0, 0, -4)
raw("unshare", 0x10000000)
raw("clone_newuser", 0x10000000 | 17, 0, 0, 0, 0)
raw("clone3", 0, 0)
raw("bpf", 0, 0, 0)
raw("perf_event_open", 0, 0, -1, -1, 0)
raw("userfaultfd", 0)
raw("mount", 0, 0, 0, 0, 0)
raw("personality_no_randomize", 0x40000)
raw("x32_getpid")
print(subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())
`;
  const node = `${process.execPath} -e 'const { execFileSync } = require("node:child_process"); console.log(execFileSync("echo", ["node-child"]).toString().trim())'`;
  const outcome = await sandbox.run({
    command: `python3 -c '${script.replaceAll("'", "'\\''")}'; ${node}`,
    workspace: ownFolder(workspace),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
  t.equal(outcome.exitCode, 0, outcome.output);
  t.same(outcome.output.split('\n'), [
    'unix EPERM',
    'unix-datagram EPERM',
    'inet ok',
    'inet6 ok',
    'netlink ok',
    'vsock EPERM',
    'packet EPERM',
    'socketpair ok',
    'socketpair-datagram EPERM',
    'socketpair-seqpacket EPERM',
    // Without the filter a null parameter block fails EFAULT, keyctl ENOKEY, the rest EINVAL or EFAULT.
    'io_uring_setup EPERM',
    'keyctl EPERM',
    'add_key EPERM',
    'unshare EPERM',
    'clone_newuser EPERM',
    'clone3 ENOSYS',
    'bpf EPERM',
    'perf_event_open EPERM',
    'userfaultfd EPERM',
    'mount EPERM',
    'personality_no_randomize EPERM',
    // An x32 call fails ENOSYS on a kernel without x32, without the filter.
    'x32_getpid EPERM',
    'child',
    'node-child',
    '',
  ]);
});

/** The numbers the live test calls by, per architecture. */
const LIVE_NUMBERS: Record<SeccompArchitecture, Record<string, number>> = {
  x64: {
    io_uring_setup: 425,
    keyctl: 250,
    add_key: 248,
    unshare: 272,
    clone_newuser: 56,
    clone3: 435,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    mount: 165,
    personality_no_randomize: 135,
    x32_getpid: 0x40000000 | 39,
  },
  arm64: {
    io_uring_setup: 425,
    keyctl: 219,
    add_key: 217,
    unshare: 97,
    clone_newuser: 220,
    clone3: 435,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    mount: 40,
    personality_no_randomize: 92,
    // arm64 has no x32: getpid by its own number, refused by nothing
    x32_getpid: 172,
  },
};
