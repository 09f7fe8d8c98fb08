/**
 * `/config` built from endpoint definitions and the request's public root. Pure.
 * Component ids start at 1 (inputs then outputs, endpoint by endpoint); dependency id = fn_index
 * = position + 1 (the JS client treats id 0 as missing).
 * @module
 */
import type { EndpointDefinition } from './types.ts';

/**
 * The Gradio version `/config` reports: the one this server tracks (docs/gradio-protocol.md,
 * "Sources"), as upstream reports its own. Clients parse it: Python needs > 4.29.0 for `/cancel`.
 */
export const GRADIO_VERSION = '6.25.0';

/** What `/config` needs besides the endpoints. */
export interface ConfigContext {
  root: string;
  title: string;
  appId: number;
  connectHeartbeat: boolean;
  maxFileSize: number | null;
}

/** Component ids of each endpoint's inputs and outputs, in config order. */
export function componentIds(endpoints: readonly EndpointDefinition<any>[]): { inputs: number[]; outputs: number[] }[] {
  let next = 1;
  return endpoints.map((e) => ({ inputs: e.inputs.map(() => next++), outputs: e.outputs.map(() => next++) }));
}

/** Dependency id (the join's fn_index) of the endpoint at `index`. */
export const dependencyId = (index: number): number => index + 1;

/** The `/config` document the clients read (gradio-protocol.md §1.2–§1.3). */
export function buildConfig(endpoints: readonly EndpointDefinition<any>[], ctx: ConfigContext) {
  const ids = componentIds(endpoints);
  const components: unknown[] = [];
  const dependencies: unknown[] = [];
  endpoints.forEach((endpoint, i) => {
    const slot = (spec: EndpointDefinition['inputs'][number], id: number, isOutput: boolean) => ({
      id,
      type: spec.component,
      props: {
        name: spec.component,
        label: spec.label,
        ...(isOutput ? {} : { value: spec.default ?? null }),
        ...(spec.description ? { info: spec.description } : {}),
        ...spec.props,
      },
      skip_api: false,
    });
    endpoint.inputs.forEach((spec, j) => components.push(slot(spec, ids[i].inputs[j], false)));
    endpoint.outputs.forEach((spec, j) => components.push(slot(spec, ids[i].outputs[j], true)));
    dependencies.push({
      id: dependencyId(i),
      targets: [],
      inputs: ids[i].inputs,
      outputs: ids[i].outputs,
      backend_fn: true,
      js: null,
      queue: true,
      api_name: endpoint.apiName,
      api_visibility: endpoint.showApi === false ? 'undocumented' : 'public',
      show_api: endpoint.showApi !== false,
      types: { generator: endpoint.generator ?? true, cancel: false },
      connection: 'sse',
      cancels: [],
      rendered_in: null,
      trigger_mode: 'multiple',
      concurrency_limit: endpoint.concurrencyLimit ?? 64,
    });
  });
  const allIds = components.map((c) => (c as { id: number }).id);
  const layout = { id: 0, children: [] };
  return {
    version: GRADIO_VERSION,
    protocol: 'sse_v3',
    api_prefix: '/gradio_api',
    root: ctx.root,
    mode: 'blocks',
    app_id: ctx.appId,
    title: ctx.title,
    enable_queue: true,
    connect_heartbeat: ctx.connectHeartbeat,
    run_history: false,
    space_id: null,
    is_space: false,
    max_file_size: ctx.maxFileSize,
    components,
    dependencies,
    layout,
    page: { '': { components: allIds, dependencies: dependencies.map((d) => (d as { id: number }).id), layout } },
    pages: [['', 'Home', true]],
  };
}
