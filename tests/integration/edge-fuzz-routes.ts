/**
 * The routes the fuzz (edge-fuzz.test.ts) drives: every REST route of the api role and every
 * Gradio route of the gateway, with the query and body fields each one reads (the fuzz also sends
 * fields nobody reads). `params` counts the path parameters (`:name` or `*`). Logout is left out:
 * it would revoke the fuzz's own token (its validation is the same bearer check as /me).
 */
export interface FuzzRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  params: number;
  query: string[];
  body: string[];
  auth: 'user' | 'tool';
}

const G = '/api/agent/gradio';
const JOIN = ['data', 'fn_index', 'session_hash', 'event_data', 'trigger_id'];

const route = (method: FuzzRoute['method'], path: string, extra: Partial<FuzzRoute> = {}): FuzzRoute => ({
  method,
  path,
  params: (path.match(/:[a-z_]+|\*/g) ?? []).length,
  query: [],
  body: [],
  auth: 'user',
  ...extra,
});

export const FUZZ_ROUTES: FuzzRoute[] = [
  route('POST', '/api/auth/login', { body: ['username', 'password'] }),
  route('GET', '/api/auth/me'),
  route('GET', '/api/auth/jwks.json'),
  route('POST', '/api/auth/service-token', { body: ['client_id', 'client_secret'] }),
  route('POST', '/api/assistant/conversations', { body: ['title'] }),
  route('GET', '/api/assistant/conversations', { query: ['q', 'cursor', 'limit', 'archived'] }),
  route('PATCH', '/api/assistant/conversations/:id', { body: ['title'] }),
  route('DELETE', '/api/assistant/conversations/:id'),
  route('POST', '/api/assistant/conversations/:id/restore'),
  route('GET', '/api/assistant/history', { query: ['conversation_id', 'before', 'limit'] }),
  route('POST', '/api/assistant/conversations/:id/messages', { body: ['role', 'content', 'metadata', 'request_id'] }),
  route('GET', '/api/agent/conversations/:id/active'),
  route('GET', '/api/agent/info'),
  route('GET', '/api/audit', { query: ['cursor', 'limit', 'operation', 'user_id', 'outcome', 'tool_call_id', 'conversation_id', 'since', 'until'] }),
  route('GET', '/api/tools/capabilities', { auth: 'tool' }),
  route('GET', '/api/tools/dashboards', { auth: 'tool', query: ['q', 'limit'] }),
  route('GET', '/api/tools/dashboards/:id', { auth: 'tool' }),
  route('GET', '/api/tools/maintenance', { auth: 'tool', query: ['status', 'service'] }),
  route('POST', '/api/tools/maintenance', { auth: 'tool', body: ['service', 'duration_minutes', 'reason'] }),
  route('POST', '/api/tools/maintenance/end', { auth: 'tool', body: ['service'] }),
  route('GET', '/api/tools/deployments', { auth: 'tool', query: ['service', 'environment', 'limit'] }),
  route('POST', '/api/tools/deployments', { auth: 'tool', body: ['service', 'version', 'environment'] }),
  route('GET', '/api/tools/health', { auth: 'tool', query: ['service'] }),
  route('GET', '/api/tools/environment', { auth: 'tool', query: ['environment'] }),
  route('GET', '/api/tools/tasks', { auth: 'tool' }),
  route('POST', '/api/tools/tasks', { auth: 'tool', body: ['title', 'description', 'service', 'priority'] }),
  route('GET', `${G}/config`),
  route('GET', `${G}/gradio_api/info`),
  route('GET', `${G}/gradio_api/app_id`),
  route('POST', `${G}/gradio_api/queue/join`, { body: JOIN }),
  route('GET', `${G}/gradio_api/queue/data`, { query: ['session_hash'] }),
  route('POST', `${G}/gradio_api/run/:api_name`, { body: ['data', 'event_data', 'session_hash'] }),
  route('POST', `${G}/gradio_api/run/chat`, { body: ['data', 'event_data', 'session_hash'] }),
  route('POST', `${G}/gradio_api/cancel`, { body: ['event_id', 'session_hash', 'fn_index'] }),
  route('POST', `${G}/gradio_api/reset`, { body: ['event_id', 'session_hash', 'fn_index'] }),
  route('GET', `${G}/gradio_api/heartbeat/:session_hash`),
  route('POST', `${G}/gradio_api/upload`, { query: ['upload_id'], body: ['files'] }),
  route('GET', `${G}/gradio_api/file=*`),
  // Issue 13: the curl call API, /login, the MCP server (not /logout: it would revoke nothing of
  // the fuzz's bearer, but is a plain redirect; not /mcp/sse: a stream held open by design).
  route('POST', `${G}/gradio_api/call/:api_name`, { body: ['data', 'session_hash'] }),
  route('POST', `${G}/gradio_api/call/v2/chat`, { body: ['message', 'conversation_id', 'action', 'approval_id'] }),
  route('GET', `${G}/gradio_api/call/chat/:event_id`),
  route('POST', `${G}/login`, { body: ['username', 'password'] }),
  route('POST', `${G}/gradio_api/mcp/`, { body: ['jsonrpc', 'id', 'method', 'params'] }),
  route('GET', `${G}/gradio_api/mcp/schema`),
  // Issue 11: the headless agent API.
  ...(['/api/agent/v1/chat/completions', '/api/agent/v1/runs'] as const).map((path) =>
    route('POST', path, { body: ['messages', 'stream', 'session_id', 'user_key', 'tool_policy', 'metadata'] }),
  ),
  route('GET', '/api/agent/v1/runs', { query: ['limit', 'status'] }),
  route('GET', '/api/agent/v1/runs/:id'),
  route('GET', '/api/agent/v1/runs/:id/events', { query: ['after_sequence', 'limit'] }),
  route('POST', '/api/agent/v1/runs/:id/cancel'),
  route('GET', '/api/agent/v1/traces', { query: ['limit'] }),
  route('GET', '/api/agent/v1/traces/:id'),
  route('GET', '/api/agent/v1/traces/:id/events', { query: ['after_sequence', 'limit'] }),
  route('GET', '/api/agent/v1/approvals', { query: ['status', 'limit'] }),
  route('GET', '/api/agent/v1/approvals/:id'),
  route('POST', '/api/agent/v1/approvals/:id/approve', { body: ['reason'] }),
  route('POST', '/api/agent/v1/approvals/:id/deny', { body: ['reason'] }),
  route('POST', `${G}/gradio_api/mcp/messages/`, { query: ['sessionId'], body: ['jsonrpc', 'id', 'method', 'params'] }),
  // Issue 13: AG-UI (RunAgentInput).
  route('POST', '/api/agent/ag-ui', { body: ['threadId', 'runId', 'messages', 'resume', 'tools', 'context', 'state', 'forwardedProps'] }),
];
