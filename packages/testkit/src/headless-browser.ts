import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { peerMissing } from './peers.ts';

/**
 * A real Chromium, headless, driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
 * JSON messages ended by NUL on file descriptors 3 and 4, so no WebSocket client and no port).
 * For tests of pages whose script does the work (the bare portal page): the page runs as a
 * customer's browser runs it, against the server under test. Null where no Chromium is
 * installed (the test skips and says so; with CI=true that is an error: peers.ts).
 */
export function chromiumPath(): string | null {
  const names = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of names) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {}
    }
  }
  peerMissing('Chromium', 'no chromium on PATH; apt-get install chromium');
  return null;
}

export interface BrowserTab {
  /** Runs `expression` in the page (awaiting a promise it gives) and returns its value as JSON. */
  evaluate<T>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy; returns that value. */
  waitFor<T>(expression: string, timeoutMs?: number): Promise<T>;
}

export interface HeadlessBrowser {
  /** A new tab at `url`, once its load event fired. */
  open(url: string): Promise<BrowserTab>;
  close(): Promise<void>;
}

export async function startHeadlessBrowser(executable = chromiumPath()): Promise<HeadlessBrowser> {
  if (!executable) throw new Error('no Chromium on PATH');
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const child: ChildProcess = spawn(
    executable,
    [
      '--headless',
      '--remote-debugging-pipe',
      `--user-data-dir=${profile}`,
      // Tests run as root in CI containers, where Chromium's sandbox cannot start.
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
  );
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(msg: { method: string; sessionId?: string; params: any }) => void>();
  let buffered = '';
  fromBrowser.setEncoding('utf8');
  fromBrowser.on('data', (chunk: string) => {
    buffered += chunk;
    let end = buffered.indexOf('\0');
    while (end !== -1) {
      const msg = JSON.parse(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
      end = buffered.indexOf('\0');
      if (typeof msg.id === 'number') {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`${msg.error.message} (${msg.error.code})`));
        else p?.resolve(msg.result);
      } else for (const l of listeners) l(msg);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    for (const p of pending.values()) p.reject(new Error('Chromium exited'));
    pending.clear();
  });

  const send = (method: string, params: object = {}, sessionId?: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });

  await send('Browser.getVersion');

  return {
    async open(url) {
      const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
      await send('Page.enable', {}, sessionId);
      const loaded = new Promise<void>((resolve) => {
        const l = (msg: { method: string; sessionId?: string }) => {
          if (msg.sessionId === sessionId && msg.method === 'Page.loadEventFired') {
            listeners.delete(l);
            resolve();
          }
        };
        listeners.add(l);
      });
      const nav = await send('Page.navigate', { url }, sessionId);
      if (nav.errorText) throw new Error(`navigation to ${url} failed: ${nav.errorText}`);
      await loaded;
      const evaluate = async <T>(expression: string): Promise<T> => {
        const r = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId);
        if (r.exceptionDetails) throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
        return r.result.value as T;
      };
      return {
        evaluate,
        async waitFor<T>(expression: string, timeoutMs = 10_000): Promise<T> {
          const end = Date.now() + timeoutMs;
          for (;;) {
            const v = await evaluate<T>(expression);
            if (v) return v;
            if (Date.now() > end) throw new Error(`timed out waiting in the page for: ${expression}`);
            await new Promise((r) => setTimeout(r, 50));
          }
        },
      };
    },
    async close() {
      await send('Browser.close').catch(() => {});
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
