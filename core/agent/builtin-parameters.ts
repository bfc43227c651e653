import { type TSchema, Type } from 'typebox';
import { WORKSPACE_TOOL_LIMITS } from '../workspace/workspace-tool-limits.js';
import { BUILTIN_LIMITS } from './builtin-limits.js';

/**
 * The argument schemas of the built-in tools that are not workspace file tools, exactly as the model is
 * shown them; arguments are checked against them before a call is admitted.
 */
export const COMMAND_PARAMETERS: TSchema = Type.Object(
  {
    command: Type.String({
      minLength: 1,
      maxLength: 8_192,
      description: 'Run by /bin/sh -c in the workspace.',
    }),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: 1_000, maximum: 600_000, description: 'Default 30000.' }),
    ),
  },
  { additionalProperties: false },
);

export const WEB_FETCH_PARAMETERS: TSchema = Type.Object(
  { url: Type.String({ minLength: 1, maxLength: 2_048, description: 'An http or https URL.' }) },
  { additionalProperties: false },
);

export const PLAN_STATUSES = ['pending', 'in_progress', 'completed'] as const;

export const PLAN_PARAMETERS: TSchema = Type.Object(
  {
    steps: Type.Array(
      Type.Object(
        {
          step: Type.String({ minLength: 1, maxLength: BUILTIN_LIMITS.plan_step_chars }),
          status: Type.Enum([...PLAN_STATUSES]),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: BUILTIN_LIMITS.plan_steps },
    ),
  },
  { additionalProperties: false },
);

export const SUBAGENT_PARAMETERS: TSchema = Type.Object(
  {
    task: Type.String({
      minLength: 1,
      maxLength: BUILTIN_LIMITS.subagent_task_chars,
      description: 'What the subagent should find out or do, with everything it needs to know.',
    }),
  },
  { additionalProperties: false },
);

export const SKILL_PARAMETERS: TSchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'The skill, as the skill index names it.',
    }),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: WORKSPACE_TOOL_LIMITS.path_chars_max,
        description:
          "A file of the skill's folder, relative to it, as its list of files gives it; the skill's instructions when left out.",
      }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'The byte to start at; 0 when left out.',
      }),
    ),
    length: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: WORKSPACE_TOOL_LIMITS.read_length_max,
        description: `How many bytes to read at most; for a file ${WORKSPACE_TOOL_LIMITS.read_length_max} when left out, for the instructions as many as fit.`,
      }),
    ),
  },
  { additionalProperties: false },
);
