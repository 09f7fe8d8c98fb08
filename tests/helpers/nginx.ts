/**
 * Runs the real Debian nginx with `nginx/nginx.test.conf.template` rendered into a temp folder
 * (pid, logs and temp paths inside it), in front of upstreams on loopback. Used by the gateway
 * integration tests and the browser end-to-end tests:
 *
 *   const nginx = await startNginx({ upstream: 3000 });          // web, api and gateway on one port
 *   const nginx = await startNginx({ web: 5173, api: 3001, gateway: 3002 });
 *   const nginx = await startNginx({ web: 3001, api: 3001, gateway: [3002, 3003, 3004] }); // replicas
 *   // nginx.url -> http://127.0.0.1:<port>; the gateway is at `${nginx.url}/api/agent/gradio`
 *   await nginx.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
export const NGINX_TEMPLATE = fileURLToPath(new URL('../../nginx/nginx.test.conf.template', import.meta.url));

/** An upstream: a port on 127.0.0.1 or a `host:port`. */
export type Upstream = number | string;

export interface NginxOptions {
  /** Default for web, api and gateway (the one-process layout). */
  upstream?: Upstream;
  web?: Upstream;
  api?: Upstream;
  /** Several gateway replicas: one `server` line each, plain round-robin (README "Running several replicas"). */
  gateway?: Upstream | Upstream[];
  /** Port nginx listens on (default: a free one). */
  port?: number;
  /** nginx size syntax, e.g. `20m` (default `20m`, as production). */
  clientMaxBodySize?: string;
  /** The nginx binary (default `NGINX_BIN`). */
  bin?: string;
}

export interface NginxInstance {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The temp folder holding the rendered config, logs and temp paths. */
  dir: string;
  /** The rendered config text. */
  config: string;
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

const hostPort = (u: Upstream | Upstream[] | undefined, name: string): string => {
  if (u === undefined) throw new Error(`startNginx: no upstream for ${name} (pass upstream or ${name})`);
  // The template says `server {{X}};`: more replicas continue it with `; server …`.
  if (Array.isArray(u)) return u.map((one) => hostPort(one, name)).join(';\n        server ');
  return typeof u === 'number' ? `127.0.0.1:${u}` : u;
};

/** Fills the template's {{PLACEHOLDERS}}; throws if one is left. */
export function renderNginxConfig(template: string, values: Record<string, string>): string {
  const text = template.replace(/\{\{([A-Z_]+)\}\}/g, (_, key: string) => {
    if (!(key in values)) throw new Error(`renderNginxConfig: no value for {{${key}}}`);
    return values[key];
  });
  return text;
}

/** A port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether a TCP connection to 127.0.0.1:port is accepted (false while nothing listens there). */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts nginx in the foreground (`daemon off`) and waits until it accepts connections. */
export async function startNginx(options: NginxOptions): Promise<NginxInstance> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-nginx-'));
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(join(dir, sub));
  const port = options.port ?? (await freePort());
  const config = renderNginxConfig(await readFile(NGINX_TEMPLATE, 'utf8'), {
    DIR: dir,
    PORT: String(port),
    WEB_UPSTREAM: hostPort(options.web ?? options.upstream, 'web'),
    API_UPSTREAM: hostPort(options.api ?? options.upstream, 'api'),
    GATEWAY_UPSTREAM: hostPort(options.gateway ?? options.upstream, 'gateway'),
    CLIENT_MAX_BODY_SIZE: options.clientMaxBodySize ?? '20m',
    // As root, workers would drop to `nobody` and could not use the temp folder.
    USER_DIRECTIVE: process.getuid?.() === 0 ? 'user root;' : '',
  });
  const confPath = join(dir, 'nginx.conf');
  await writeFile(confPath, config);

  const bin = options.bin ?? NGINX_BIN;
  const child: ChildProcess = spawn(bin, ['-p', dir, '-e', join(dir, 'error.log'), '-c', confPath, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  // A binary that cannot be run (not installed) is an 'error' event, and 'exit' may never follow:
  // without a listener it would crash the whole test or bench process.
  let spawnError: Error | null = null;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (error) => ((spawnError = error), resolve(null)));
  });
  let running = true;
  void exited.then(() => (running = false));

  const deadline = Date.now() + 10_000;
  while (!(await canConnect(port))) {
    if (!running || Date.now() > deadline) {
      child.kill('SIGKILL');
      const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
      await rm(dir, { recursive: true, force: true });
      if (spawnError) throw new Error(`nginx could not be started (${bin}): ${(spawnError as Error).message}. Install Debian's nginx (\`./airlock test\` does) or set NGINX_BIN.`);
      throw new Error(`nginx did not start: ${stderr}\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    config,
    errorLog: () => readFile(join(dir, 'error.log'), 'utf8').catch(() => ''),
    async stop() {
      if (running) {
        child.kill('SIGTERM'); // fast shutdown: open event streams are closed
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
