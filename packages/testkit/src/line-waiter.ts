type Exit = { code: number | null; signal: NodeJS.Signals | null };

/**
 * The output lines of a child process and a wait for one of them (already seen or to come):
 * shared by the apps (processes.ts) and the engines (engine-process.ts). `see` is fed every
 * line; `waitFor` rejects on timeout or when the process exits first, with `describe()` in the
 * message (what the process printed).
 */
export function lineWaiter(exited: Promise<Exit>, describe: () => string) {
  const lines: string[] = [];
  const waiters = new Set<(line: string) => void>();
  return {
    lines,
    see(line: string): void {
      lines.push(line);
      for (const w of [...waiters]) w(line);
    },
    waitFor(pred: (line: string) => boolean, what: string, timeoutMs: number): Promise<string> {
      const seen = lines.find(pred);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
        const fail = (why: string) => {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`${why} waiting for ${what}\n${describe()}`));
        };
        const check = (line: string) => {
          if (!pred(line)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(line);
        };
        waiters.add(check);
        void exited.then((e) => fail(`exited (code ${e.code}, signal ${e.signal})`));
      });
    },
  };
}
