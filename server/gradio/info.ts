/**
 * `/gradio_api/info` built from endpoint definitions. Pure.
 * @module
 */
import { displayName, hasDefault, parameterName, pythonTypeOf, schemaOf } from './components.ts';
import type { ComponentSpec, EndpointDefinition } from './types.ts';

/** One parameter as `/info` lists it. */
export function describeParameter(spec: ComponentSpec, index: number) {
  const optional = hasDefault(spec);
  return {
    label: spec.label,
    parameter_name: parameterName(spec, index),
    parameter_has_default: optional,
    parameter_default: optional ? (spec.default ?? null) : null,
    type: schemaOf(spec),
    python_type: pythonTypeOf(spec),
    component: displayName(spec.component),
    example_input: spec.example ?? (optional ? (spec.default ?? null) : null),
    ...(spec.description ? { description: spec.description } : {}),
  };
}

/** One return value as `/info` lists it. */
export function describeReturn(spec: ComponentSpec) {
  const python = pythonTypeOf(spec);
  const schema = schemaOf(spec);
  const type = Object.keys(schema).length === 0 ? { type: {}, description: python.description || 'any valid json' } : schema;
  return { label: spec.label, type, python_type: python, component: displayName(spec.component) };
}

/**
 * The whole `/info` document: named endpoints keyed by `"/" + apiName`, no unnamed ones.
 * `allEndpoints` (`?all_endpoints=true`) also lists those with `showApi: false`, as upstream does.
 */
export function buildInfo(endpoints: readonly EndpointDefinition<any>[], allEndpoints = false) {
  const named: Record<string, unknown> = {};
  for (const endpoint of endpoints) {
    const shown = endpoint.showApi !== false;
    if (!shown && !allEndpoints) continue;
    named[`/${endpoint.apiName}`] = {
      parameters: endpoint.inputs.map(describeParameter),
      returns: endpoint.outputs.map(describeReturn),
      api_visibility: shown ? 'public' : 'undocumented',
      show_api: shown,
      description: endpoint.description ?? '',
    };
  }
  return { named_endpoints: named, unnamed_endpoints: {} };
}
