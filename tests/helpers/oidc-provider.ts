/**
 * Starts tests/helpers/oidc-provider-process.mjs (a real oidc-provider; it listens first, and is
 * told Airlock's redirect URIs once Airlock listens: no port guessed ahead) and walks a browser's way
 * through a sign-in with plain fetch: redirects followed by hand, each host's cookies kept.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface TestProvider {
  issuer: string;
  /** Registers the client's redirect URIs (once, when Airlock's address is known); requests wait for it. */
  register(client: { redirectUris: string[]; postLogoutRedirectUris?: string[] }): void;
  stop(): Promise<void>;
}

export const PROVIDER_CLIENT = { id: 'airlock-test', secret: 'airlock-test-secret-0123456789' };

export async function startTestProvider(): Promise<TestProvider> {
  const child: ChildProcess = spawn(process.execPath, ['tests/helpers/oidc-provider-process.mjs'], {
    env: { ...process.env, CLIENT_ID: PROVIDER_CLIENT.id, CLIENT_SECRET: PROVIDER_CLIENT.secret },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the test provider exited (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => line.startsWith('listening ') && resolve(line.slice(10)));
  });
  return {
    issuer,
    register: (client) => void child.stdin!.write(`${JSON.stringify(client)}\n`),
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill()))),
  };
}

/** A cookie jar per origin, as a browser keeps one (names only; enough for these flows). */
export class Browser {
  private jars = new Map<string, Map<string, string>>();

  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    const u = new URL(url);
    const jar = this.jars.get(u.origin) ?? new Map<string, string>();
    this.jars.set(u.origin, jar);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: { ...headers, ...(cookie ? { cookie } : {}) } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair.split('=');
      if (/expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line)) jar.delete(name.trim());
      else jar.set(name.trim(), value.join('='));
    }
    return res;
  }

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(origin)?.get(name);
  }

  setCookie(origin: string, name: string, value: string): void {
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(origin, jar);
  }

  /** Follows redirects from `url` until one leaves for `stopAt` (a URL prefix) or a page answers; that response's URL. */
  async follow(url: string, stopAt: string): Promise<{ url: string; res: Response }> {
    let current = url;
    for (let hops = 0; hops < 10; hops++) {
      const res = await this.get(current);
      const location = res.headers.get('location');
      if (!location) return { url: current, res };
      const next = new URL(location, current).href;
      if (next.startsWith(stopAt)) return { url: next, res };
      current = next;
    }
    throw new Error(`too many redirects from ${url}`);
  }
}
