/**
 * Issue 27 item 3 for MCP tools, through the real @gradio/client, gateway and PostgreSQL and a real
 * streamable-HTTP MCP server: a server's `<tool>_preview` tool answers the card's preview
 * (informational, asked with the same arguments before the pause, once) and is never a tool of the
 * model's; a tool without one says "no preview" (preview null); the arguments carry labels.
 */
import type { Client } from '@gradio/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect } from '../helpers/chat-client.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { startMcpGateway, type McpGateway } from '../helpers/mcp-gateway.ts';

let gateway: McpGateway;
let db: TestDatabase;
let client: Client;
const calls: Array<{ tool: string; args: unknown }> = [];

beforeAll(async () => {
  gateway = await startMcpGateway('ops', () => {
    const s = new McpServer({ name: 'ops', version: '1.0.0' });
    const record = (tool: string, text: string) => async (args: unknown) => {
      calls.push({ tool, args });
      return { content: [{ type: 'text' as const, text }] };
    };
    const schema = { index: z.string().optional().describe('Which index').meta({ title: 'Search index' }) };
    s.registerTool('trigger_rebuild', { description: 'Trigger a rebuild of the search index.', inputSchema: schema }, record('trigger_rebuild', 'rebuilt'));
    s.registerTool('trigger_rebuild_preview', { description: 'What a rebuild would do.', inputSchema: schema }, record('trigger_rebuild_preview', 'products index: 1.2 M documents, about 4 min of degraded search'));
    s.registerTool('purge_cache', { description: 'Purge the CDN cache.', inputSchema: { zone: z.enum(['edge', 'origin']).optional() } }, record('purge_cache', 'purged'));
    return s;
  });
  ({ db, client } = gateway);
});

afterAll(() => gateway?.close());

const confirmOf = (turn: Awaited<ReturnType<typeof collect>>) => turn.messages.find((m) => m.metadata.type === 'confirm_required')?.metadata as Record<string, any> | undefined;

describe('MCP previews', () => {
  it('<tool>_preview gives the card its preview, asked once before the pause, and is never a tool of the model', async () => {
    let paused!: Awaited<ReturnType<typeof collect>>;
    await expect.poll(async () => {
      paused = await collect(chat(client, 'trigger the rebuild'));
      return paused.types.includes('confirm_required');
    }, { timeout: 15_000, interval: 300 }).toBe(true);
    const card = confirmOf(paused)!;
    expect(card.preview.summary).toBe('products index: 1.2 M documents, about 4 min of degraded search');
    expect(card.preview.details).toEqual({ source: 'trigger_rebuild_preview', checked: false });
    expect(card.labels).toEqual({ index: 'Search index' });
    expect(calls.map((c) => c.tool)).toEqual(['trigger_rebuild_preview']);

    const done = await collect(chat(client, 'confirm', card.conversation_id, 'confirm'));
    expect(done.types).toContain('tool_end');
    // The resume runs the tool; it does not ask for the preview again.
    expect(calls.map((c) => c.tool)).toEqual(['trigger_rebuild_preview', 'trigger_rebuild']);

    const tools = await db.pool.query(`SELECT payload->>'tool' AS tool FROM conversation_events WHERE kind = 'tool.call'`);
    expect(tools.rows.map((r) => r.tool).some((t: string) => t.endsWith('_preview'))).toBe(false);
  }, 60_000);

  it('a tool without one: preview null ("no preview")', async () => {
    const paused = await collect(chat(client, 'purge the cache'));
    const card = confirmOf(paused);
    expect(card, JSON.stringify(paused.types)).toBeDefined();
    expect(card!.preview).toBeNull();
    expect(calls.filter((c) => c.tool === 'purge_cache')).toHaveLength(0);
  }, 60_000);

  it('grants apply to MCP tools too (issue 27 item 2): approve with a grant, the next call runs with no card under it; revoked, it asks', async () => {
    // A call with no arguments under a rule without `when` offers none: its match would be empty,
    // covering every call of the tool (issue 36 item 2).
    const bare = confirmOf(await collect(chat(client, 'purge the cache')))!;
    expect(bare.grantable).toBeNull();
    const refused = await collect(client.submit('/chat', { conversation_id: bare.conversation_id, action: 'confirm', approval_id: bare.approval_id, grant: { ttl_s: 600 } }));
    expect(refused.messages.map((m) => m.metadata)).toContainEqual(expect.objectContaining({ type: 'error', code: 'FORBIDDEN' }));
    await collect(client.submit('/chat', { conversation_id: bare.conversation_id, action: 'deny', approval_id: bare.approval_id }));

    const paused = await collect(chat(client, 'purge the edge cache'));
    const card = confirmOf(paused)!;
    // No scope argument named (no when, not a catalog tool): the exact call.
    expect(card.grantable).toEqual({ max_ttl_s: 8 * 3600, match: { zone: 'edge' } });
    const confirmed = await collect(client.submit('/chat', { conversation_id: card.conversation_id, action: 'confirm', approval_id: card.approval_id, grant: { ttl_s: 600 } }));
    expect(confirmed.types).toContain('tool_end');
    const before = calls.filter((c) => c.tool === 'purge_cache').length;

    const granted = await collect(chat(client, 'purge the edge cache', card.conversation_id));
    expect(granted.types).not.toContain('confirm_required');
    const start = granted.messages.find((m) => m.metadata.type === 'tool_start')!.metadata as Record<string, any>;
    expect(start.grant_by).toBe('admin');
    expect(calls.filter((c) => c.tool === 'purge_cache')).toHaveLength(before + 1);
    const { rows } = await db.pool.query(`SELECT uses FROM approval_grants WHERE id = $1`, [start.grant_id]);
    expect(rows).toEqual([{ uses: 1 }]);

    await db.pool.query(`UPDATE approval_grants SET revoked_at = now() WHERE id = $1`, [start.grant_id]);
    const asked = await collect(chat(client, 'purge the edge cache', card.conversation_id));
    expect(asked.types).toContain('confirm_required');
    expect(calls.filter((c) => c.tool === 'purge_cache')).toHaveLength(before + 1);
  }, 60_000);
});
