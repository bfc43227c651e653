import type { CallEvidence, Descriptor, TerminalPayload } from '../client/index.js';

/** Progress and results, written for a person reading the terminal. */
export function step(text: string): void {
  process.stdout.write(`  · ${text}\n`);
}

export function heading(text: string): void {
  process.stdout.write(`\n${text}\n`);
}

export function transcript(prompt: string, terminal: TerminalPayload): void {
  heading('Transcript');
  process.stdout.write(`  you   ${prompt}\n`);
  process.stdout.write(`  magi  ${terminal.assistant_text}\n`);
}

interface ManifestTool {
  name: string;
  timeout_ms: number;
}

export function manifest(value: object | null | undefined): void {
  heading('Manifest (what the turn was allowed to use)');
  if (!value) {
    process.stdout.write('  none\n');
    return;
  }
  const { resources, tools } = value as { resources: Descriptor[]; tools: ManifestTool[] };
  for (const resource of resources) {
    const timeout = tools.find((tool) => tool.name === resource.name)?.timeout_ms;
    const detail = timeout === undefined ? '' : `  timeout ${timeout} ms`;
    process.stdout.write(
      `  ${resource.kind.padEnd(5)} ${resource.name.padEnd(10)} revision ${resource.revision_sha256.slice(0, 12)}…  ${resource.captured_bytes} bytes${detail}\n`,
    );
  }
}

/**
 * Each call as the evidence has it: the executor generation it was dispatched to, and the one that
 * delivered its result when that was another (after a resume).
 */
export function calls(evidence: readonly CallEvidence[], deliveredBy?: number): void {
  heading('Calls (turn.application_evidence)');
  if (evidence.length === 0) process.stdout.write('  none\n');
  for (const call of evidence) {
    const delivered =
      deliveredBy === undefined || deliveredBy === call.executor_generation
        ? ''
        : `, its result delivered by generation ${deliveredBy} after the resume`;
    process.stdout.write(
      `  ${call.name.padEnd(10)} ${call.status.padEnd(10)} effects ${call.external_effects}  (dispatched to executor generation ${call.executor_generation}${delivered})\n`,
    );
  }
}

export function outcome(terminal: TerminalPayload): void {
  const reason = terminal.error === null ? '' : ` (${terminal.error.code})`;
  heading(`Turn ${terminal.status}${reason}.`);
}
