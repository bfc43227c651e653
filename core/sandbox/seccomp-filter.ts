import {
  AF_UNIX,
  ALLOWED_PERSONALITIES,
  ALLOWED_SOCKET_FAMILIES,
  ARGUMENT_RULES,
  CLONE_NAMESPACE_FLAGS,
  ERRNO,
  REFUSED_CALLS,
  type SeccompArchitecture,
  SOCK_STREAM,
  SOCK_TYPE_MASK,
} from './seccomp-policy.js';

/**
 * The seccomp program every command runs under (seccomp-policy.ts says what it refuses and why), compiled
 * into the classic BPF bytes `bwrap --seccomp FD` loads.
 *
 * A filter must check the architecture the call was made in: system call numbers differ between them, and
 * an x86-64 process can enter the kernel as i386 or x32, where calls have other numbers. So each supported
 * architecture gets a program of its own that kills a process calling in any other ABI, and on x86-64
 * refuses every x32 call.
 */

export type { SeccompArchitecture } from './seccomp-policy.js';

/** The architectures the filter is written for, by `process.arch`; on others `run_command` is unavailable. */
export function seccompArchitecture(arch: string): SeccompArchitecture | null {
  return arch === 'x64' || arch === 'arm64' ? arch : null;
}

/** AUDIT_ARCH_* of linux/audit.h. */
const AUDIT_ARCH: Readonly<Record<SeccompArchitecture, number>> = { x64: 0xc000003e, arm64: 0xc00000b7 };
/** x32 system calls are x86-64 ones with this bit set. */
const X32_BIT = 0x40000000;

// linux/filter.h and linux/seccomp.h
const BPF_LD_W_ABS = 0x20;
const BPF_ALU_AND_K = 0x54;
const BPF_JEQ_K = 0x15;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]. Both architectures
// are little-endian, so the low half of args[i] is at 16 + 8 * i.
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const argumentLow = (index: number): number => 16 + 8 * index;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const load = (offset: number): Instruction => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
const and = (mask: number): Instruction => ({ code: BPF_ALU_AND_K, jt: 0, jf: 0, k: mask });
const ret = (value: number): Instruction => ({ code: BPF_RET_K, jt: 0, jf: 0, k: value });
/** If the accumulator equals `k`, run the next instruction, else skip `skip` of them. */
const ifEqual = (k: number, skip: number): Instruction => ({ code: BPF_JEQ_K, jt: 0, jf: skip, k });
const ALLOW = ret(SECCOMP_RET_ALLOW);
const refuse = (errno: number): Instruction => ret(SECCOMP_RET_ERRNO | errno);
const EPERM = refuse(ERRNO.EPERM);

/**
 * The arguments' part of a rule: instructions run once the call number matched, each path ending in a
 * return, so that a rule never jumps past itself.
 */
const ARGUMENT_CHECKS: Readonly<Record<keyof typeof ARGUMENT_RULES, Instruction[]>> = {
  socket: [
    load(argumentLow(0)),
    ...Object.values(ALLOWED_SOCKET_FAMILIES).flatMap((family) => [ifEqual(family, 1), ALLOW]),
    EPERM,
  ],
  socketpair: [
    load(argumentLow(0)),
    ifEqual(AF_UNIX, 4),
    load(argumentLow(1)),
    and(SOCK_TYPE_MASK),
    ifEqual(SOCK_STREAM, 1),
    ALLOW,
    EPERM,
  ],
  clone: [load(argumentLow(0)), and(CLONE_NAMESPACE_FLAGS), ifEqual(0, 1), ALLOW, EPERM],
  personality: [
    load(argumentLow(0)),
    ...ALLOWED_PERSONALITIES.flatMap((persona) => [ifEqual(persona, 1), ALLOW]),
    EPERM,
  ],
};

/** Jumps are eight bits wide: a block longer than this could not be skipped. */
const JUMP_MAX = 255;

/** The program for `arch`, eight bytes per instruction in the host's byte order (struct sock_filter). */
export function commandSeccompProgram(arch: SeccompArchitecture): Buffer {
  const program: Instruction[] = [
    load(OFFSET_ARCH),
    { code: BPF_JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH[arch] },
    ret(SECCOMP_RET_KILL_PROCESS),
    load(OFFSET_NR),
  ];
  if (arch === 'x64') program.push({ code: BPF_JSET_K, jt: 0, jf: 1, k: X32_BIT }, EPERM);
  for (const refused of REFUSED_CALLS) {
    const nr = refused.numbers[arch];
    if (nr !== null) program.push(ifEqual(nr, 1), refuse(ERRNO[refused.errno]));
  }
  for (const [rule, checks] of Object.entries(ARGUMENT_CHECKS)) {
    const nr = ARGUMENT_RULES[rule as keyof typeof ARGUMENT_RULES].numbers[arch];
    if (nr === null) continue;
    if (checks.length > JUMP_MAX) throw new RangeError('an argument rule is too long to skip');
    // The checks run only for their own call and always return, so the next rule still sees the number.
    program.push(ifEqual(nr, checks.length), ...checks);
  }
  program.push(ALLOW);
  return encode(program);
}

function encode(program: readonly Instruction[]): Buffer {
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
