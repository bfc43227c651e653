import { type ParseArgsConfig, parseArgs } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Option handling shared by the benches: parses `options` (plus `--help`, which prints `usage`), and
 * checks numbers, printing the usage and exiting 2 on a bad option.
 */
export function benchOptions<T extends Options>(usage: string, options: T) {
  function usageError(message: string): never {
    console.error(`${message}\n${usage}`);
    process.exit(2);
  }

  function numberOption(name: string, text: string, rule: { integer?: boolean; zero?: boolean }): number {
    const value = Number(text);
    const tooSmall = rule.zero ? value < 0 : value <= 0;
    if (!Number.isFinite(value) || tooSmall || (rule.integer && !Number.isInteger(value))) {
      usageError(
        `--${name} must be a ${rule.zero ? 'non-negative' : 'positive'} ${rule.integer ? 'whole ' : ''}number`,
      );
    }
    return value;
  }

  const withHelp = { ...options, help: { type: 'boolean' } } as const;
  let parsed: ReturnType<typeof parseArgs<{ options: typeof withHelp }>>;
  try {
    parsed = parseArgs({ options: withHelp });
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return { values: parsed.values, usageError, numberOption };
}
