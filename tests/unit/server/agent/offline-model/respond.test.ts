import { describe, expect, it } from 'vitest';
import { respond, type ChatMessageIn, type OfferedTool } from '../../../../../server/agent/offline-model/respond.ts';

const TOOLS: OfferedTool[] = [
  { name: 'deploy_service', parameters: { required: ['service', 'version', 'environment'], properties: { service: {}, version: {}, environment: {} } } },
  { name: 'check_health', parameters: { properties: { service: {} } } },
  { name: 'list_maintenance_events', parameters: { properties: { status: {}, service: {} } } },
];
const user = (content: string): ChatMessageIn => ({ role: 'user', content });

describe('respond', () => {
  it('calls an offered tool with the arguments from the text', () => {
    expect(respond([{ role: 'system', content: 'x' }, user('deploy checkout-api 2.4.1 to staging')], TOOLS)).toEqual({
      type: 'tool_calls',
      calls: [{ tool: 'deploy_service', args: { service: 'checkout-api', version: '2.4.1', environment: 'staging' } }],
    });
  });

  it('asks when a required argument is missing', () => {
    const d = respond([user('deploy checkout-api')], TOOLS);
    expect(d).toEqual({ type: 'text', text: expect.stringMatching(/^To deploy checkout-api, I still need which version and which environment/) });
  });

  it('joins the answer to its question with the request before it', () => {
    const question = respond([user('deploy checkout-api')], TOOLS);
    const messages: ChatMessageIn[] = [user('deploy checkout-api'), { role: 'assistant', content: question.type === 'text' ? question.text : '' }, user('2.4.1 to staging')];
    expect(respond(messages, TOOLS)).toEqual({
      type: 'tool_calls',
      calls: [{ tool: 'deploy_service', args: { service: 'checkout-api', version: '2.4.1', environment: 'staging' } }],
    });
  });

  it('takes a bare reply as the one free-text field it asked for', () => {
    const maintenance: OfferedTool = { name: 'start_maintenance', parameters: { required: ['service', 'duration_minutes', 'reason'], properties: { service: {}, duration_minutes: {}, reason: {} } } };
    const first = 'start maintenance on db-primary for 30 minutes';
    const question = respond([user(first)], [maintenance]);
    expect(question).toEqual({ type: 'text', text: 'To start maintenance on db-primary, I still need the reason. Could you tell me?' });
    const messages: ChatMessageIn[] = [user(first), { role: 'assistant', content: (question as { text: string }).text }, user('A disk upgrade.')];
    expect(respond(messages, [maintenance])).toEqual({
      type: 'tool_calls',
      calls: [{ tool: 'start_maintenance', args: { service: 'db-primary', duration_minutes: 30, reason: 'disk upgrade' } }],
    });
  });

  it('only calls tools that were offered', () => {
    expect(respond([user('search dashboards for latency')], TOOLS)).toEqual({ type: 'text', text: expect.stringMatching(/not available to me/) });
  });

  it('makes several calls for requests joined by ";"', () => {
    const d = respond([user("what's the health of payments-api; list maintenance events")], TOOLS);
    expect(d).toEqual({ type: 'tool_calls', calls: [{ tool: 'check_health', args: { service: 'payments-api' } }, { tool: 'list_maintenance_events', args: {} }] });
  });

  it('answers from the trailing tool results', () => {
    const messages: ChatMessageIn[] = [
      user('health of payments-api'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'check_health', arguments: '{"service":"payments-api"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '{"status":"healthy"}' },
    ];
    expect(respond(messages, TOOLS)).toEqual({ type: 'text', text: 'Health of payments-api:\n\nstatus: healthy.' });
  });

  it('replies helpfully to anything else, reading text content parts', () => {
    const d = respond([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], TOOLS);
    expect(d).toEqual({ type: 'text', text: expect.stringMatching(/^Hello! I'm the Airlock operations assistant/) });
  });
});
