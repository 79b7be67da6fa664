import { createInterface } from 'node:readline';
import { UsageError } from './args.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export function ask(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Echo nothing of what is typed.
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.startsWith(question)) process.stderr.write(question);
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}

/** The password from stdin (--password-stdin) or typed twice at a hidden prompt. */
export async function readPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin) return readStdin();
  if (!process.stdin.isTTY) throw new UsageError('no terminal to ask for the password: pipe it with --password-stdin');
  const first = await ask('Password: ');
  const second = await ask('Repeat password: ');
  if (first !== second) throw new UsageError('the passwords differ');
  return first;
}
