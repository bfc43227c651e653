import type { ResourceSource } from './wire-types.js';

/** A tool or skill to register: a tool's source holds `{input_schema, output_schema, timeout_ms?}`. */
export interface ResourceSpec {
  name: string;
  description: string;
  source: ResourceSource;
}

export type ResourceKind = 'tool' | 'skill';
