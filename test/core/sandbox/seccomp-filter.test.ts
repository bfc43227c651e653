import t from 'tap';
import {
  type SeccompArchitecture,
  seccompArchitecture,
  unixSocketFilter,
} from '../../../core/sandbox/seccomp-filter.js';
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

t.test('the x64 program, instruction by instruction', async (t) => {
  const bytes = unixSocketFilter('x64');
  t.equal(bytes.length, 12 * 8);
  t.equal(bytes.subarray(0, 8).toString('hex'), '2000000004000000', 'struct sock_filter, little-endian');
  t.same(decode(bytes), [
    ld(4), // arch
    jeq(AUDIT_ARCH.x64, 1), // skips the kill
    ret(KILL_PROCESS), // any other ABI: i386 entered from an x86-64 process
    ld(0), // nr
    { code: JSET_K, jt: 6, jf: 0, k: X32_BIT }, // to 11, deny
    jeq(41, 2), // socket: to 8, the domain
    jeq(425, 4), // io_uring_setup: to 11, deny
    ret(ALLOW), // everything else
    ld(16), // the low half of args[0], socket's domain
    jeq(1, 1), // AF_UNIX: to 10+1, deny
    ret(ALLOW), // any other family
    ret(ERRNO_EPERM),
  ]);
});

t.test('the arm64 program, instruction by instruction', async (t) => {
  const bytes = unixSocketFilter('arm64');
  t.equal(bytes.length, 11 * 8, 'no x32 check: arm64 has no such ABI');
  t.same(decode(bytes), [
    ld(4),
    jeq(AUDIT_ARCH.arm64, 1),
    ret(KILL_PROCESS),
    ld(0),
    jeq(198, 2), // socket: to 7, the domain
    jeq(425, 4), // io_uring_setup: to 10, deny
    ret(ALLOW),
    ld(16),
    jeq(1, 1),
    ret(ALLOW),
    ret(ERRNO_EPERM),
  ]);
});

const NUMBERS: Record<SeccompArchitecture, { socket: number; ioUringSetup: number; others: number[] }> = {
  // read, write, openat, connect, socketpair, sendmsg, clone3
  x64: { socket: 41, ioUringSetup: 425, others: [0, 1, 257, 42, 53, 46, 435] },
  // read, write, openat, connect, socketpair, sendmsg, clone3
  arm64: { socket: 198, ioUringSetup: 425, others: [63, 64, 56, 203, 199, 211, 435] },
};

for (const architecture of ['x64', 'arm64'] as const) {
  t.test(`the ${architecture} program decides each call as its comments say`, async (t) => {
    const program = decode(unixSocketFilter(architecture));
    const arch = AUDIT_ARCH[architecture];
    const { socket, ioUringSetup, others } = NUMBERS[architecture];
    const verdict = (call: Call) => evaluate(program, call);
    t.equal(verdict({ arch, nr: socket, args: [1n, 1n, 0n] }), ERRNO_EPERM, 'socket(AF_UNIX) fails EPERM');
    t.equal(
      verdict({ arch, nr: socket, args: [0xffff_ffff_0000_0001n] }),
      ERRNO_EPERM,
      'whatever the upper half of the register: the kernel reads an int',
    );
    for (const family of [0n, 2n, 10n, 16n, 17n, 0x1_0000_0002n]) {
      t.equal(verdict({ arch, nr: socket, args: [family, 1n, 0n] }), ALLOW, `socket(${family}) is allowed`);
    }
    t.equal(verdict({ arch, nr: ioUringSetup, args: [8n, 0n] }), ERRNO_EPERM, 'io_uring_setup fails EPERM');
    for (const nr of others) {
      t.equal(
        verdict({ arch, nr, args: [1n] }),
        ALLOW,
        `call ${nr}, even with AF_UNIX as its first argument`,
      );
    }
    for (const other of [AUDIT_ARCH.i386, architecture === 'x64' ? AUDIT_ARCH.arm64 : AUDIT_ARCH.x64, 0]) {
      t.equal(
        verdict({ arch: other, nr: socket, args: [2n] }),
        KILL_PROCESS,
        `arch ${other.toString(16)} is killed`,
      );
    }
    if (architecture === 'x64') {
      for (const nr of [socket, 0, 1, 512, 547]) {
        t.equal(verdict({ arch, nr: X32_BIT | nr, args: [2n] }), ERRNO_EPERM, `x32 call ${nr} fails EPERM`);
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
attempt("socketpair", lambda: socket.socketpair(socket.AF_UNIX))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def raw(name, number, *args):
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(arg) for arg in args])
    print(name, "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()])
raw("io_uring_setup", 425, 1, 0)
raw("x32-getpid", 0x40000000 | 39)
print(subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())
`;
  const node = `${process.execPath} -e 'const { execFileSync } = require("node:child_process"); console.log(execFileSync("echo", ["node-child"]).toString().trim())'`;
  const outcome = await sandbox.run({
    command: `python3 -c '${script.replaceAll("'", "'\\''")}'; ${node}`,
    workspace,
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
    'socketpair ok',
    // Without the filter a null parameter block fails EFAULT, and an x32 call ENOSYS on a kernel without x32.
    'io_uring_setup EPERM',
    'x32-getpid EPERM',
    'child',
    'node-child',
    '',
  ]);
});
