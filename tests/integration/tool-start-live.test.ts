/**
 * Issue 30, item 9 (finding 14): `tool_start` reached clients only once the tool returned, so a
 * long tool showed no running card. The hold was for approval tools (server/agent/events.ts): a
 * call that may pause had its start held until its end, even in the resume that runs it with its
 * decision, where it cannot pause again. Performed with a slow MCP tool (2 s) through the real
 * @gradio/client, the real gateway and PostgreSQL: a confirmed call that needs approval, and a
 * call its policy allows, each show tool_start well before tool_end.
 */
import type { Client } from '@gradio/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, type WireMessage } from '../helpers/chat-client.ts';
import { startMcpGateway, type McpGateway } from '../helpers/mcp-gateway.ts';

const SLOW_MS = 2_000;

let gateway: McpGateway;
let client: Client;

beforeAll(async () => {
  gateway = await startMcpGateway('slow', () => {
    const s = new McpServer({ name: 'slow', version: '1.0.0' });
    const slow = async () => {
      await new Promise((r) => setTimeout(r, SLOW_MS));
      return { content: [{ type: 'text' as const, text: 'rebuilt' }] };
    };
    // No annotations: destructive by MCP default, so it needs approval.
    s.registerTool('trigger_rebuild', { description: 'Trigger a rebuild of the search index.' }, slow);
    s.registerTool('read_report', { description: 'Read the nightly report.', annotations: { readOnlyHint: true } }, slow);
    return s;
  });
  client = gateway.client;
});

afterAll(() => gateway?.close());

/** A turn, with the time each message type was first seen by the client. */
async function timedTurn(text: string, conversationId: string | null = null, action: 'confirm' | null = null) {
  const firstSeen: Record<string, number> = {};
  const turn = await collect(chat(client, text, conversationId, action), (m: WireMessage) => {
    firstSeen[m.metadata.type] ??= Date.now();
  });
  return { turn, firstSeen };
}

/** Waits until the tool servers are connected (they connect in the background). */
async function toolsReady() {
  await expect.poll(async () => (await collect(chat(client, 'read the report'))).types.includes('tool_end'), { timeout: 15_000, interval: 300 }).toBe(true);
}

describe('tool_start goes out when the tool starts', () => {
  it('for a confirmed call that needed approval: the running card shows while the tool runs', async () => {
    await toolsReady();
    const { turn: paused } = await timedTurn('trigger the rebuild');
    expect(paused.types).toContain('confirm_required');
    expect(paused.types).not.toContain('tool_start');
    const conversationId = paused.messages[0]!.metadata.conversation_id;

    const { turn, firstSeen } = await timedTurn('confirm', conversationId, 'confirm');
    expect(turn.types).toContain('tool_start');
    expect(turn.types).toContain('tool_end');
    // Before: tool_start and tool_end came together, after the 2 s.
    expect(firstSeen.tool_end! - firstSeen.tool_start!).toBeGreaterThanOrEqual(SLOW_MS * 0.75);
  }, 60_000);

  it('for a call its policy allows', async () => {
    const { turn, firstSeen } = await timedTurn('read the report');
    expect(turn.types).toContain('tool_start');
    expect(firstSeen.tool_end! - firstSeen.tool_start!).toBeGreaterThanOrEqual(SLOW_MS * 0.75);
  }, 60_000);
});
