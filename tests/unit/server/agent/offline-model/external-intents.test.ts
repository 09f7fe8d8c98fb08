import { describe, expect, it } from 'vitest';
import { argsFor, extractPayload, extractPaths, parseExternalIntent, type SchemaTool } from '../../../../../server/agent/offline-model/external-intents.ts';
import { respond } from '../../../../../server/agent/offline-model/respond.ts';

const path = { type: 'string' };
const tools: SchemaTool[] = [
  { name: 'filesystem_read_file', parameters: { required: ['path'], properties: { path, tail: { type: 'number' } } } },
  { name: 'filesystem_read_text_file', parameters: { required: ['path'], properties: { path } } },
  { name: 'filesystem_write_file', parameters: { required: ['path', 'content'], properties: { path, content: { type: 'string' } } } },
  { name: 'filesystem_list_directory', parameters: { required: ['path'], properties: { path } } },
  { name: 'filesystem_list_allowed_directories', parameters: { properties: {} } },
  { name: 'filesystem_move_file', parameters: { required: ['source', 'destination'], properties: { source: path, destination: path } } },
  { name: 'everything_get_structured_content', parameters: { required: ['location'], properties: { location: { type: 'string', enum: ['New York', 'Chicago', 'Los Angeles'] } } } },
  { name: 'everything_trigger_long_running_operation', parameters: { properties: { duration: { type: 'number' }, steps: { type: 'number' } } } },
  { name: 'everything_echo', parameters: { required: ['message'], properties: { message: { type: 'string' } } } },
  { name: 'ident_whoami', parameters: { properties: {} } },
];

describe('parseExternalIntent — phrasing for tools known only by name and schema', () => {
  const rows: Array<[text: string, tool: string, args: Record<string, unknown>]> = [
    ['read the file /srv/notes/readme.txt', 'filesystem_read_file', { path: '/srv/notes/readme.txt' }],
    ['write hello to /srv/notes/notes.txt', 'filesystem_write_file', { path: '/srv/notes/notes.txt', content: 'hello' }],
    ['write "two words" into /srv/a.txt', 'filesystem_write_file', { path: '/srv/a.txt', content: 'two words' }],
    ['list the directory /srv/notes', 'filesystem_list_directory', { path: '/srv/notes' }],
    ['move the file /srv/a.txt to /srv/b.txt', 'filesystem_move_file', { source: '/srv/a.txt', destination: '/srv/b.txt' }],
    ['get the structured content for Chicago', 'everything_get_structured_content', { location: 'Chicago' }],
    ['trigger the long running operation with duration 10 and steps 5', 'everything_trigger_long_running_operation', { duration: 10, steps: 5 }],
    ['echo hello world', 'everything_echo', { message: 'hello world' }],
    ['whoami on the ident service', 'ident_whoami', {}],
  ];
  it.each(rows)('%s -> %s', (text, tool, args) => {
    expect(parseExternalIntent(text, tools)).toMatchObject({ tool, args });
  });

  it('no verb of any tool said: no intent', () => {
    expect(parseExternalIntent('deploy checkout-api 2.4.1 to staging', tools)).toBeNull();
  });

  it('paths and payloads', () => {
    expect(extractPaths('copy ~/a.txt to /b/c.txt.')).toEqual(['~/a.txt', '/b/c.txt']);
    expect(extractPayload('write hello there to /x')).toBe('hello there');
    expect(argsFor(tools[0], 'read /x')).toEqual({ path: '/x' });
  });
});

describe('respond — MCP tools beside the built-in rules', () => {
  const offered = [...tools.map((t) => ({ name: t.name, parameters: t.parameters })), { name: 'check_health', parameters: { properties: { service: path } } }];

  it('calls the MCP tool when it fits', () => {
    expect(respond([{ role: 'user', content: 'read the file /srv/notes/readme.txt' }], offered)).toEqual({
      type: 'tool_calls',
      calls: [{ tool: 'filesystem_read_file', args: { path: '/srv/notes/readme.txt' } }],
    });
  });

  it('keeps the built-in rules for built-in requests', () => {
    expect(respond([{ role: 'user', content: "what's the health of payments-api" }], offered)).toMatchObject({ type: 'tool_calls', calls: [{ tool: 'check_health' }] });
  });

  it('asks for a missing required argument', () => {
    const decision = respond([{ role: 'user', content: 'write hello' }], offered);
    expect(decision.type).toBe('text');
    expect(decision.type === 'text' && decision.text).toMatch(/I still need/);
  });
});
