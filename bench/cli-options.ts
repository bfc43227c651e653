/** Option handling shared by the benches: a usage text, and numbers checked with it. */
export function benchUsage(usage: string) {
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

  return { usageError, numberOption };
}
