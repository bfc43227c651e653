/** The few styles the command uses, as ANSI sequences; none at all when colors are off. */
const CODES = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, cyan: 36 } as const;

export type Style = keyof typeof CODES;

export type Paint = (style: Style, text: string) => string;

export function painter(colors: boolean): Paint {
  return colors ? (style, text) => `\x1b[${CODES[style]}m${text}\x1b[0m` : (_style, text) => text;
}

/** Whether `stream` is a terminal that shows colors: NO_COLOR, NODE_DISABLE_COLORS and TERM=dumb say no. */
export function showsColors(
  stream: { isTTY?: boolean; hasColors?: (env?: object) => boolean },
  env: NodeJS.ProcessEnv,
): boolean {
  return stream.isTTY === true && (stream.hasColors?.(env) ?? false);
}
