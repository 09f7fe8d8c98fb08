/**
 * Defaults per Gradio component type (JSON-schema type, Python type, display name), so endpoint
 * definitions only state what differs. Pure.
 * @module
 */
import type { ComponentSpec, JsonSchema } from './types.ts';

interface ComponentDefaults {
  type: JsonSchema;
  pythonType: string;
  description?: string;
}

const FILE_TYPE: JsonSchema = { type: 'object', properties: { path: { type: 'string' } }, description: 'FileData' };

const DEFAULTS: Record<string, ComponentDefaults> = {
  textbox: { type: { type: 'string' }, pythonType: 'str' },
  number: { type: { type: 'number' }, pythonType: 'float' },
  checkbox: { type: { type: 'boolean' }, pythonType: 'bool' },
  json: { type: {}, pythonType: 'str | float | bool | list | dict', description: 'any valid json' },
  multimodaltextbox: {
    type: { type: 'object', properties: { text: { type: 'string' }, files: { type: 'array', items: { type: 'object' } } } },
    pythonType: 'dict(text: str, files: list[filepath])',
  },
  file: { type: FILE_TYPE, pythonType: 'filepath' },
  image: { type: FILE_TYPE, pythonType: 'filepath' },
  dropdown: { type: { type: 'string' }, pythonType: 'str' },
};

/** The component's JSON-schema type (declared, else the component's default, else any). */
export function schemaOf(spec: ComponentSpec): JsonSchema {
  return spec.type ?? DEFAULTS[spec.component]?.type ?? {};
}

/** `python_type` as `/info` lists it. */
export function pythonTypeOf(spec: ComponentSpec): { type: string; description: string } {
  const d = DEFAULTS[spec.component];
  return { type: spec.pythonType ?? d?.pythonType ?? 'Any', description: d?.description ?? '' };
}

/** `"multimodaltextbox"` -> `"Multimodaltextbox"` (Gradio capitalises `props.name`). */
export function displayName(component: string): string {
  return component.charAt(0).toUpperCase() + component.slice(1);
}

/** Whether the parameter is optional (a `default` key, even null). */
export function hasDefault(spec: ComponentSpec): boolean {
  return Object.prototype.hasOwnProperty.call(spec, 'default');
}

/** The parameter's name: declared, else the label in snake_case. */
export function parameterName(spec: ComponentSpec, index: number): string {
  if (spec.name) return spec.name;
  const fromLabel = spec.label.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return fromLabel || `param_${index}`;
}
