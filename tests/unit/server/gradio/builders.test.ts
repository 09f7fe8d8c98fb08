import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../../../server/gradio/config-builder.ts';
import { buildInfo } from '../../../../server/gradio/info.ts';
import type { EndpointDefinition } from '../../../../server/gradio/types.ts';

const chat: EndpointDefinition = {
  apiName: 'chat',
  description: 'Talk to the assistant',
  inputs: [
    { name: 'message', label: 'Message', component: 'multimodaltextbox', default: null, example: { text: 'Hello', files: [] } },
    { name: 'conversation_id', label: 'Conversation id', component: 'textbox', default: null, example: 'abc' },
  ],
  outputs: [{ label: 'Response', component: 'json' }],
  handler: async () => [null],
};
const echo: EndpointDefinition = {
  apiName: 'echo',
  inputs: [{ label: 'Text', component: 'textbox' }],
  outputs: [{ label: 'Out', component: 'textbox' }],
  concurrencyLimit: 2,
  generator: false,
  handler: async () => [''],
};
const ctx = { root: 'https://h/api/agent/gradio', title: 'Airlock', appId: 7, connectHeartbeat: false, maxFileSize: 1000 };

describe('buildConfig', () => {
  const config = buildConfig([chat, echo], ctx) as any;

  it('carries the fields the clients read', () => {
    expect(config).toMatchObject({
      protocol: 'sse_v3', api_prefix: '/gradio_api', root: 'https://h/api/agent/gradio', version: '6.25.0',
      enable_queue: true, connect_heartbeat: false, run_history: false, max_file_size: 1000, title: 'Airlock', app_id: 7,
    });
    expect(Number(config.version.split('.')[0])).toBeGreaterThanOrEqual(4); // Python needs > 4.29.0 for /cancel
  });

  it('numbers components from 1 and dependencies from 1 (JS treats id 0 as missing)', () => {
    expect(config.components.map((c: any) => c.id)).toEqual([1, 2, 3, 4, 5]);
    expect(config.components[0]).toMatchObject({ type: 'multimodaltextbox', props: { name: 'multimodaltextbox', label: 'Message' }, skip_api: false });
    expect(config.dependencies).toHaveLength(2);
    expect(config.dependencies[0]).toMatchObject({
      id: 1, api_name: 'chat', inputs: [1, 2], outputs: [3], queue: true, backend_fn: true, api_visibility: 'public', connection: 'sse', types: { generator: true },
    });
    expect(config.dependencies[1]).toMatchObject({ id: 2, api_name: 'echo', inputs: [4], outputs: [5], types: { generator: false } });
  });

  it('every dependency input/output id exists in components (the Python client requires it)', () => {
    const ids = new Set(config.components.map((c: any) => c.id));
    for (const d of config.dependencies) for (const id of [...d.inputs, ...d.outputs]) expect(ids.has(id)).toBe(true);
    expect(config.page[''].dependencies).toEqual([1, 2]);
  });
});

describe('buildInfo', () => {
  const info = buildInfo([chat, echo]) as any;

  it('lists named endpoints by "/" + apiName and an empty unnamed map', () => {
    expect(Object.keys(info.named_endpoints)).toEqual(['/chat', '/echo']);
    expect(info.unnamed_endpoints).toEqual({});
  });

  it('describes parameters with names, defaults, types, python types, components and examples', () => {
    const [message, conversation] = info.named_endpoints['/chat'].parameters;
    expect(message).toEqual({
      label: 'Message', parameter_name: 'message', parameter_has_default: true, parameter_default: null,
      type: { type: 'object', properties: { text: { type: 'string' }, files: { type: 'array', items: { type: 'object' } } } },
      python_type: { type: 'dict(text: str, files: list[filepath])', description: '' },
      component: 'Multimodaltextbox', example_input: { text: 'Hello', files: [] },
    });
    expect(conversation).toMatchObject({ parameter_name: 'conversation_id', type: { type: 'string' }, python_type: { type: 'str' }, component: 'Textbox', example_input: 'abc' });
    expect(info.named_endpoints['/echo'].parameters[0]).toMatchObject({ parameter_name: 'text', parameter_has_default: false });
  });

  it('describes returns like Gradio (json = any valid json)', () => {
    expect(info.named_endpoints['/chat'].returns).toEqual([
      { label: 'Response', type: { type: {}, description: 'any valid json' }, python_type: { type: 'str | float | bool | list | dict', description: 'any valid json' }, component: 'Json' },
    ]);
    expect(info.named_endpoints['/chat']).toMatchObject({ api_visibility: 'public', description: 'Talk to the assistant' });
  });
});
