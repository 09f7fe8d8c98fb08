/**
 * A streamable-HTTP MCP server (the SDK's stateless pattern: a fresh McpServer per request) that
 * records what every request carried: its path, JSON-RPC method and headers. The identity tests use
 * it to see exactly which credentials a tool server receives.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { guarded } from './guarded-handler.ts';

export interface SeenRequest {
  path: string;
  method: string;
  headers: IncomingMessage['headers'];
}

export interface RecordingMcp {
  /** http://127.0.0.1:<port> (append any path: the server builder gets it). */
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Starts it; `build(path)` makes the McpServer that answers a request to `path`. */
export async function startRecordingMcp(build: (path: string) => McpServer): Promise<RecordingMcp> {
  const seen: SeenRequest[] = [];
  const http = createServer(
    guarded(async (req, res) => {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const body = raw ? JSON.parse(raw) : undefined;
      seen.push({ path: req.url ?? '', method: body?.method ?? req.method ?? '', headers: req.headers });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      await build(req.url ?? '').connect(transport);
      await transport.handleRequest(req, res, body);
    }),
  );
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}`,
    seen,
    close: () => new Promise<void>((r) => http.close(() => r())),
  };
}
